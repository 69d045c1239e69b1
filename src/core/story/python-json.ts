import { isJsonObject } from 'src/core/events/json-values';

function escapeString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (code < 0x20 || code > 0x7e) {
      // ensure_ascii: every non-ASCII code unit as \uXXXX (astral characters as surrogate pairs).
      for (let i = 0; i < ch.length; i++) {
        out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
      }
    } else out += ch;
  }
  return `${out}"`;
}

/**
 * `json.dumps(value)` with Python's defaults: `", "` and `": "` separators and `ensure_ascii`
 * (non-ASCII characters escaped as `\uXXXX`).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return escapeString(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'NaN';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (isJsonObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${escapeString(k)}: ${pythonJsonDumps(v)}`)
      .join(', ')}}`;
  }
  return escapeString(typeof value === 'bigint' ? value.toString() : typeof value);
}
