import { DialogueError } from 'src/core/errors/dialogue-error';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';

/** Keys every wire event may carry besides its kind's own fields. */
const COMMON_KEYS = new Set(['event', 'timestamp', 'metadata']);

/** Throws `EVENTS.INVALID` for a wire dict that cannot be built into an event. */
export function invalidEvent(message: string, raw: unknown): never {
  throw new DialogueError('EVENTS.INVALID', message, { event: raw });
}

/** A list of entities (non-objects dropped); `[]` when absent or null. */
export function entityList(value: unknown, what: string, raw: unknown): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) invalidEvent(`${what} must be a list of entities.`, raw);
  return value.filter(isJsonObject);
}

/** The keys of `raw` besides the common ones and `known`, in their original order. */
export function extrasOf(raw: JsonObject, known: readonly string[]): JsonObject {
  const extras: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!COMMON_KEYS.has(key) && !known.includes(key)) extras[key] = value;
  }
  return extras;
}

/**
 * Python `dateutil` accepts many formats; we accept what `Date` parses and write it back the way
 * `datetime.isoformat()` would for the usual inputs (`Z` becomes `+00:00`).
 */
export function isoDateTime(value: unknown, raw: unknown): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    invalidEvent(
      `Reminder 'date_time' must be an ISO 8601 date and time, got ${JSON.stringify(value)}.`,
      raw,
    );
  }
  return value.replace(' ', 'T').replace(/Z$/, '+00:00');
}
