import { type JsonObject } from 'src/core/events/event-base';

/** A plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python truthiness of a JSON value: null, false, 0, '', [] and {} are false. */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') {
    return false;
  }
  if (Array.isArray(value)) return value.length > 0;
  if (isJsonObject(value)) return Object.keys(value).length > 0;
  return true;
}

/** A string field, or null when absent/null; other types are kept as their JSON text. */
export function optionalString(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A number field, or null when absent/null or not a number. */
export function optionalNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A shallow copy of an object that properties will be added to. Same keys, values and order as
 * `{ ...value }`, but V8 (Node 20) gives a spread's copy a map without transitions: every key
 * added to it afterwards, by assignment or in the same literal (`{ ...value, extra }`), takes
 * the runtime's slow path, about 0.3–0.4 µs each, where a copy made by Object.assign takes the
 * ordinary inline-cached one. Keys the copy already has can still be set cheaply on a spread.
 */
export function extendable(value: JsonObject): JsonObject {
  // A "__proto__" key (JSON.parse makes it an own property) would set the copy's prototype
  // under Object.assign; a spread copies it as the key it is.
  return Object.hasOwn(value, '__proto__') ? { ...value } : Object.assign({}, value);
}

/**
 * Keys of a parse result that describe single tokens (Rasa's `text_tokens`: one `[start, end]`
 * per token). `/model/parse` answers them; the `user` event's `parse_data` leaves them out, since
 * no part of the dialogue reads them and they would make a long message's tracker many times the
 * size of its text.
 */
export const PER_TOKEN_PARSE_KEYS: readonly string[] = ['text_tokens'];

/**
 * An {@link extendable} copy of parse data without {@link PER_TOKEN_PARSE_KEYS}, as the `user`
 * event stores it.
 */
export function storedParseData(parse: JsonObject): JsonObject {
  if (!PER_TOKEN_PARSE_KEYS.some((k) => Object.hasOwn(parse, k))) return extendable(parse);
  if (Object.hasOwn(parse, '__proto__')) {
    const copy = { ...parse };
    for (const k of PER_TOKEN_PARSE_KEYS) Reflect.deleteProperty(copy, k);
    return copy;
  }
  const copy: JsonObject = {};
  for (const key of Object.keys(parse)) {
    if (!PER_TOKEN_PARSE_KEYS.includes(key)) copy[key] = parse[key];
  }
  return copy;
}

/** Deep copy of JSON data. */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Structural equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}
