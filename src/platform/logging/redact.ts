/**
 * The one place that decides what is a credential in a log line, and the functions that hide
 * it: query parameters (`?token=`, `?access_token=`, `?X-Amz-Signature=`, …), URL userinfo
 * (`postgres://user:password@host`), `Bearer`/`Basic` credentials in text, HTTP headers
 * (`authorization`, `cookie`, `x-api-key`, webhook signatures, …) and object keys of logged
 * values (`password`, `clientSecret`, …). Every logger of the process (pino-http, the
 * application logger, the bootstrap logger) runs its output through these.
 */

/** What a hidden value is replaced with. */
export const REDACTED = '[Redacted]';

/**
 * A name (query parameter, header or object key) whose normalised form (lower case, without
 * `-`, `_` and `.`) contains one of these words names a credential.
 */
export const SECRET_NAME_WORDS: readonly string[] = [
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'apikey',
  'signature',
  'credential',
  'authorization',
  'cookie',
  'jwt',
  'privatekey',
  'accesskey',
  'sessionid',
  'license',
];

/**
 * Short query-parameter and header names that are credentials only as a whole name (`?key=`,
 * Azure SAS `?sig=`); as object keys in log data they are too common to hide (`key` of a
 * stored model, for one).
 */
export const SECRET_PARAM_NAMES: readonly string[] = ['key', 'sig', 'pwd', 'pass', 'auth', 'code'];

const PARAM_NAMES = new Set(SECRET_PARAM_NAMES);

function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_.\s]/g, '');
}

function containsSecretWord(normalised: string): boolean {
  for (const word of SECRET_NAME_WORDS) if (normalised.includes(word)) return true;
  return false;
}

/** True for an object key of logged data that holds a credential. */
export function isSecretKey(name: string): boolean {
  return containsSecretWord(normalise(name));
}

/** True for a query parameter or HTTP header name that carries a credential. */
export function isSecretParam(name: string): boolean {
  const n = normalise(name);
  return PARAM_NAMES.has(n) || containsSecretWord(n);
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** `scheme://user:password@` (or `scheme://token@`) at the start of an authority. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s@"'<>]*)@/gi;
/** A `name=value` pair after `?` or `&` (query strings, also inside longer text). */
const QUERY_PAIR = /([?&])([^=&#\s"'<>]+)=([^&#\s"'<>]*)/g;
/**
 * `Bearer <credential>` / `Basic <credential>` (an Authorization value quoted in text): a
 * credential has at least 6 characters, one of them a digit or `.-_+/=` (so prose such as
 * "basic greeting" stays as it is).
 */
const AUTH_SCHEME = /\b(bearer|basic)\s+(?=[\w\-.~+/]*[\d.\-_+/=])[\w\-.~+/]{6,}=*/gi;

/**
 * Hides every credential in a string: secret query parameters (of absolute and relative URLs,
 * also inside longer text), the userinfo of URLs (the password, or a lone user name, which is
 * often a token) and `Bearer …`/`Basic …` credentials.
 */
export function redactText(text: string): string {
  if (text.length < 4) return text;
  let out = text;
  if (out.includes('@')) {
    out = out.replace(USERINFO, (_m, scheme: string, info: string) => {
      const colon = info.indexOf(':');
      const user = colon < 0 ? REDACTED : `${info.slice(0, colon)}:${REDACTED}`;
      return `${scheme}${user}@`;
    });
  }
  if (out.includes('=')) {
    out = out.replace(QUERY_PAIR, (m, sep: string, name: string) =>
      isSecretParam(decodeName(name)) ? `${sep}${name}=${REDACTED}` : m,
    );
  }
  if (/bearer|basic/i.test(out)) {
    out = out.replace(AUTH_SCHEME, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  }
  return out;
}

/** A URL (absolute or a request's path and query) with every credential hidden. */
export function redactUrl(url: string): string {
  return redactText(url);
}

/** HTTP headers (request or response) with the values of credential headers hidden. */
export function redactHeaders(
  headers: Record<string, unknown> | undefined | null,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (headers === undefined || headers === null) return out;
  for (const [name, value] of Object.entries(headers)) {
    out[name] = isSecretParam(name) ? REDACTED : redactLogValue(value);
  }
  return out;
}

const MAX_DEPTH = 8;
const MAX_ENTRIES = 1000;

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A logged value with credentials hidden: strings through `redactText`, plain objects and
 * arrays walked (credential keys hidden whole), anything else (errors, buffers, class
 * instances) returned unchanged — errors go through the `err` serializer, which redacts its
 * output. Returns the value itself when nothing had to change.
 */
export function redactLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    const n = Math.min(value.length, MAX_ENTRIES);
    for (let i = 0; i < n; i++) {
      const item: unknown = value[i];
      const redacted = redactLogValue(item, depth + 1);
      if (redacted !== item) {
        copy ??= value.slice();
        copy[i] = redacted;
      }
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | null = null;
  let seen = 0;
  for (const key of Object.keys(value)) {
    if (++seen > MAX_ENTRIES) break;
    const item = value[key];
    const redacted =
      isSecretKey(key) && item !== null && item !== undefined && item !== ''
        ? REDACTED
        : redactLogValue(item, depth + 1);
    if (redacted !== item) {
      copy ??= { ...value };
      copy[key] = redacted;
    }
  }
  return copy ?? value;
}
