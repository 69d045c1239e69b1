import { isJsonObject } from 'src/core/events/json-values';

/** Strings Python writes as they are between quotes: printable ASCII without `"` and `\`. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Characters JSON.stringify leaves as they are but Python's `ensure_ascii` escapes. */
const NOT_ASCII = /[\u007f-\uffff]/g;

function escapeCodeUnit(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * A string as Python's json.dumps writes it. Most strings (ids, step names) need no escape;
 * otherwise JSON.stringify (native) escapes `"`, `\`, control characters (short forms such as
 * `\n` where JSON has them, else `\u00xx`, as Python) and lone surrogates, and `ensure_ascii`
 * then escapes every code unit from DEL up (astral characters as their surrogate pair).
 */
function escapeString(value: string): string {
  if (PLAIN.test(value)) return `"${value}"`;
  return JSON.stringify(value).replace(NOT_ASCII, escapeCodeUnit);
}

/**
 * `json.dumps(value)` with Python's defaults: `", "` and `": "` separators and `ensure_ascii`
 * (non-ASCII characters escaped as `\uXXXX`). Written with loops rather than `map` / `join`:
 * every `stack` event's patch goes through here.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return escapeString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'NaN';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ', ';
      out += pythonJsonDumps(value[i]);
    }
    return `${out}]`;
  }
  if (isJsonObject(value)) {
    let out = '{';
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (i > 0) out += ', ';
      out += `${escapeString(key)}: ${pythonJsonDumps(value[key])}`;
    }
    return `${out}}`;
  }
  return escapeString(typeof value === 'bigint' ? value.toString() : typeof value);
}
