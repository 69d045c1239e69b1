/**
 * Python value semantics over JSON-like values, shared by the predicate evaluator and the Jinja
 * subset: truthiness, `==`, ordering, `str()` and `repr()`. Slot values and frame fields are JSON,
 * so Python's `int`/`float`/`bool` all arrive as numbers or booleans (and `bool` counts as a
 * number, as in Python).
 */

export type PlainObject = Record<string, unknown>;

/** A JSON object (a Python dict): a plain object, not an array or a class instance. */
export function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A number or a boolean (Python's numeric tower, `True == 1`). */
export function isNumeric(value: unknown): value is number | boolean {
  return typeof value === 'number' || typeof value === 'boolean';
}

function toNumber(value: number | boolean): number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/** Python `bool(value)` for JSON-like values. */
export function pyTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof Set) return value.size > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

/** Python `a == b` for JSON-like values (deep for lists and dicts). */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (isNumeric(a) && isNumeric(b)) return toNumber(a) === toNumber(b);
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => pyEquals(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && pyEquals(a[k], b[k]));
  }
  return a === b;
}

/** Thrown where Python raises a `TypeError` (e.g. `"5" > 3`). */
export class PythonTypeError extends Error {}

/**
 * Python ordering: negative, zero or positive for `a` before, equal to or after `b`. Numbers
 * (and booleans), strings and lists compare; anything else raises like Python does.
 */
export function pyCompare(a: unknown, b: unknown): number {
  if (isNumeric(a) && isNumeric(b)) {
    const x = toNumber(a);
    const y = toNumber(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!pyEquals(a[i], b[i])) return pyCompare(a[i], b[i]);
    }
    return a.length - b.length;
  }
  throw new PythonTypeError(`'<' not supported between ${pyTypeName(a)} and ${pyTypeName(b)}`);
}

export function pyTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  if (isPlainObject(value)) return 'dict';
  return typeof value;
}

function pyNumber(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return String(value);
}

/** Python `str(value)`: strings as they are, `None`, `True`/`False`, containers as `repr`. */
export function pyStr(value: unknown): string {
  if (typeof value === 'string') return value;
  return pyRepr(value);
}

/** Python `repr(value)` for JSON-like values (`['a', 1]`, `{'k': None}`). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyStringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isPlainObject(value)) {
    const items = Object.entries(value).map(([k, v]) => `${pyStringRepr(k)}: ${pyRepr(v)}`);
    return `{${items.join(', ')}}`;
  }
  if (typeof value === 'bigint' || typeof value === 'symbol') return value.toString();
  return Object.prototype.toString.call(value);
}

function pyStringRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f) {
      out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    } else out += ch;
  }
  return out + quote;
}
