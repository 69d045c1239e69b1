import { randomUUID } from 'node:crypto';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { eventKind, wireDecoder } from 'src/core/events/event-catalogue';
import { isJsonObject } from 'src/core/events/json-values';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { invalidEvent } from 'src/core/events/wire-fields';

/**
 * Builds an event from its wire dict (Rasa's `Event.from_parameters`): unknown fields are dropped,
 * a missing/0/null timestamp becomes `now()`, missing metadata `{}`, legacy `form` and
 * `form_validation` become `active_loop` and `loop_interrupted`. Throws `EVENTS.INVALID` for a
 * dict that cannot be built (e.g. `action` with neither `name` nor `action_text`). The kind's own
 * fields are read by its entry in the event catalogue.
 */
export function deserializeEvent(
  raw: Record<string, unknown>,
  now: () => number,
  newId: () => string = randomUUID,
): DialogueEvent {
  const name = raw.event;
  if (typeof name !== 'string') invalidEvent("Event dict has no 'event' name.", raw);
  const timestamp =
    typeof raw.timestamp === 'number' && raw.timestamp !== 0 ? raw.timestamp : now();
  if (raw.metadata !== undefined && raw.metadata !== null && !isJsonObject(raw.metadata)) {
    invalidEvent("Event 'metadata' must be an object.", raw);
  }
  const decode = wireDecoder(name);
  if (decode === undefined) return invalidEvent(`Unknown event name '${name}'.`, raw);
  const base: EventBaseInit = {
    timestamp,
    metadata: isJsonObject(raw.metadata) ? raw.metadata : {},
  };
  return decode(raw, base, newId);
}

/** Deserialises a list of wire events in order (see `deserializeEvent`). */
export function deserializeEvents(
  raws: readonly Record<string, unknown>[],
  now: () => number,
): DialogueEvent[] {
  return raws.map((raw) => deserializeEvent(raw, now));
}

/** `event`, `timestamp`, then `metadata` unless empty (Rasa `Event.as_dict`). */
function head(event: string, e: EventBase): SerializedEvent {
  const d: SerializedEvent = { event, timestamp: e.timestamp };
  if (hasKeys(e.metadata)) d.metadata = e.metadata;
  return d;
}

/** Whether the object has an own enumerable key (without building the key list). */
function hasKeys(o: object): boolean {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) return true;
  return false;
}

/**
 * Rasa's `as_dict()`, key order included: `event`, `timestamp`, `metadata` unless empty, then the
 * kind's own keys as its catalogue entry writes them (`user` and `bot` always carry `metadata`:
 * right after `timestamp` when it is non-empty, else as the last key).
 */
export function serializeEvent(e: DialogueEvent): SerializedEvent {
  const d = head(e.type, e);
  eventKind(e.type).encode?.(e, d);
  return d;
}

/** Serialises a list of events in order. */
export function serializeEvents(events: readonly DialogueEvent[]): SerializedEvent[] {
  return events.map(serializeEvent);
}
