import { createHash } from 'node:crypto';

const FIRST = [
  'Alex',
  'Sam',
  'Robin',
  'Jordan',
  'Taylor',
  'Morgan',
  'Casey',
  'Jamie',
  'Avery',
  'Riley',
  'Quinn',
  'Harper',
  'Rowan',
  'Emerson',
  'Finley',
  'Hayden',
];
const LAST = [
  'Smith',
  'Meyer',
  'Garcia',
  'Rossi',
  'Novak',
  'Dubois',
  'Jensen',
  'Silva',
  'Kowalski',
  'Brown',
  'Moreau',
  'Larsen',
  'Costa',
  'Weber',
  'Murphy',
  'Fischer',
];
const CITIES = [
  'Springfield',
  'Riverton',
  'Lakewood',
  'Fairview',
  'Greenville',
  'Oakdale',
  'Milltown',
  'Brookside',
  'Westfield',
  'Ashford',
  'Kingsport',
  'Northbridge',
  'Clayton',
  'Dunmore',
  'Elmstead',
  'Harborview',
];

/** A byte source derived from one seed (SHA-256 in counter mode). */
class Bytes {
  private buffer = Buffer.alloc(0);
  private at = 0;
  private counter = 0;

  constructor(private readonly seed: string) {}

  next(): number {
    if (this.at >= this.buffer.length) {
      this.buffer = createHash('sha256').update(`${this.seed}\u0000${this.counter++}`).digest();
      this.at = 0;
    }
    return this.buffer[this.at++] as number;
  }

  below(n: number): number {
    return ((this.next() << 8) | this.next()) % n;
  }

  digitString(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.below(10));
    return s;
  }

  pick<T>(list: readonly T[]): T {
    return list[this.below(list.length)] as T;
  }
}

function luhnCheckDigit(partial: string): string {
  for (let d = 0; d <= 9; d++) {
    const n = partial + String(d);
    let sum = 0;
    let double = false;
    for (let i = n.length - 1; i >= 0; i--) {
      let x = n.charCodeAt(i) - 48;
      if (double) {
        x *= 2;
        if (x > 9) x -= 9;
      }
      sum += x;
      double = !double;
    }
    if (sum % 10 === 0) return String(d);
  }
  return '0';
}

function ibanCheckDigits(country: string, bban: string): string {
  const moved = `${bban}${country}00`;
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) rest = (rest * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return String(98 - rest).padStart(2, '0');
}

type Generator = (b: Bytes, original: string) => string;

const GENERATORS: Record<string, Generator> = {
  PERSON: (b) => `${b.pick(FIRST)} ${b.pick(LAST)}`,
  EMAIL_ADDRESS: (b) =>
    `${b.pick(FIRST).toLowerCase()}.${b.pick(LAST).toLowerCase()}${b.digitString(2)}@example.com`,
  // 555-01xx: the numbers set aside for fiction in the North American plan.
  PHONE_NUMBER: (b) => `+1-555-01${b.digitString(2)}`,
  CREDIT_CARD: (b) => {
    const partial = `4000${b.digitString(11)}`;
    return partial + luhnCheckDigit(partial);
  },
  IBAN_CODE: (b) => {
    const bban = `XXXX${b.digitString(14)}`;
    return `GB${ibanCheckDigits('GB', bban)}${bban}`;
  },
  // Documentation ranges (RFC 5737, RFC 3849): never a real host.
  IP_ADDRESS: (b, original) =>
    original.includes(':')
      ? `2001:db8::${b.below(0xffff).toString(16)}`
      : `192.0.2.${1 + b.below(254)}`,
  URL: (b) => `https://example.com/${b.digitString(8)}`,
  // Area 9xx is never issued.
  US_SSN: (b) => `9${b.digitString(2)}-${b.digitString(2)}-${b.digitString(4)}`,
  LOCATION: (b) => b.pick(CITIES),
  GPE: (b) => b.pick(CITIES),
  CITY: (b) => b.pick(CITIES),
};

/** The entity types the deterministic faker generates values for (others fall back to mask). */
export const FAKER_TYPES: readonly string[] = Object.keys(GENERATORS);

/**
 * A fake value of `type` for `original`, the same every time for the same (key, type,
 * original): a consumer can still tell that two events name the same person without seeing
 * who. Null when the type has no generator.
 */
export function fakeValue(key: string, type: string, original: string): string | null {
  const generator = GENERATORS[type];
  if (generator === undefined) return null;
  return generator(new Bytes(`${key}\u0000${type}\u0000${original}`), original);
}
