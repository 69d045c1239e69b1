import { createHmac, timingSafeEqual } from 'node:crypto';

/** The hex HMAC of `data` with `secret` (`sha256` unless told). */
export function hmacHex(secret: string, data: Buffer | string, algorithm = 'sha256'): string {
  return createHmac(algorithm, secret).update(data).digest('hex');
}

/**
 * Whether two strings are equal, in time that depends on neither their content nor where they
 * differ: both are hashed first, so strings of different lengths compare in the same time too.
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'parley-compare').update(given).digest();
  const b = createHmac('sha256', 'parley-compare').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
