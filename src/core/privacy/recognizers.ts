import { isIP } from 'node:net';

/** A piece of PII found in a text: `[start, end)` in UTF-16 code units. */
export interface PiiSpan {
  readonly start: number;
  readonly end: number;
  /** Presidio's entity type name (EMAIL_ADDRESS, PHONE_NUMBER, …) or the NLU entity, upper case. */
  readonly type: string;
}

interface Recognizer {
  readonly type: string;
  readonly pattern: RegExp;
  /** A further check of a candidate (checksums, digit counts). */
  readonly valid?: (match: string) => boolean;
}

const digits = (s: string): string => s.replace(/\D/g, '');

/** Dates look like phone numbers: 2024-05-01, 01.05.2024, 1/5/24. */
const DATE = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})$/;

/** Luhn's checksum (payment card numbers). */
export function luhnValid(number: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let d = number.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return number.length > 0 && sum % 10 === 0;
}

/** ISO 13616 mod-97 check of an IBAN (spaces ignored). */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(s)) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const d of value) rest = (rest * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/**
 * Deterministic recognisers of the pattern-shaped Presidio entity types, in priority order (a
 * tie between overlapping spans of equal length goes to the earlier one). Names, places and
 * other free-form types have no recogniser here: they come from the NLU's extracted entities.
 */
const RECOGNIZERS: readonly Recognizer[] = [
  {
    type: 'EMAIL_ADDRESS',
    pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g,
  },
  { type: 'URL', pattern: /\b(?:https?:\/\/|www\.)[^\s<>"']+[^\s<>"'.,;:!?)]/gi },
  {
    type: 'IBAN_CODE',
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g,
    valid: ibanValid,
  },
  {
    type: 'CREDIT_CARD',
    pattern: /\b\d(?:[ -]?\d){12,18}\b/g,
    valid: (m) => luhnValid(digits(m)),
  },
  {
    type: 'IP_ADDRESS',
    pattern:
      /(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?![\w.:])/g,
    valid: (m) => isIP(m) !== 0,
  },
  { type: 'US_SSN', pattern: /\b\d{3}-\d{2}-\d{4}\b/g },
  {
    type: 'PHONE_NUMBER',
    pattern:
      /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?!\w)/g,
    valid: (m) => {
      const n = digits(m).length;
      return n >= 7 && n <= 15 && !DATE.test(m);
    },
  },
];

/** The entity types `recognize` knows. */
export const RECOGNIZED_TYPES: readonly string[] = RECOGNIZERS.map((r) => r.type);

/** Spans of the wanted pattern-shaped types in `text` (possibly overlapping; see `resolveOverlaps`). */
export function recognize(text: string, wanted: ReadonlySet<string>): PiiSpan[] {
  const spans: PiiSpan[] = [];
  for (const r of RECOGNIZERS) {
    if (!wanted.has(r.type)) continue;
    for (const m of text.matchAll(r.pattern)) {
      const start = m.index;
      if (r.valid !== undefined && !r.valid(m[0])) continue;
      spans.push({ start, end: start + m[0].length, type: r.type });
    }
  }
  return spans;
}

/**
 * Non-overlapping spans in text order: of overlapping spans the longer wins, a tie the one
 * listed first (callers list NLU entities before recognised patterns).
 */
export function resolveOverlaps(spans: readonly PiiSpan[]): PiiSpan[] {
  const ranked = spans
    .map((s, i) => ({ s, i }))
    .sort((a, b) => b.s.end - b.s.start - (a.s.end - a.s.start) || a.i - b.i);
  const kept: PiiSpan[] = [];
  for (const { s } of ranked) {
    if (s.end <= s.start) continue;
    if (kept.some((k) => s.start < k.end && k.start < s.end)) continue;
    kept.push(s);
  }
  return kept.sort((a, b) => a.start - b.start);
}
