import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { kindsStoringColumn } from 'src/core/events/event-catalogue';
import { serializeEvent } from 'src/core/events/event-codec';
import { type SerializedEvent } from 'src/core/events/serialized-event';

/**
 * An event ready for an event store: its wire JSON text (Rasa's `event.as_dict()`) plus the
 * fields stores file events under.
 */
export interface EncodedEvent {
  readonly type: string;
  /** As on the wire; may be missing or non-finite in events posted by clients. */
  readonly timestamp: unknown;
  /** The intent of a `user` event. */
  readonly intent: string | null;
  /** The action of an `action` or `action_execution_rejected` event. */
  readonly action: string | null;
  /** `metadata.assistant_id` when it is a non-empty string. */
  readonly assistantId: string | null;
  readonly json: string;
}

/** Kinds whose `parse_data.intent.name` is filed under `intent` (the catalogue's `storeColumn`). */
const INTENT_KINDS = kindsStoringColumn('intent');
/** Kinds whose `name` is filed under `action`. */
const ACTION_KINDS = kindsStoringColumn('action');

/** An event received on the wire, encoded for storage as it is. */
export function encodeWireEvent(event: SerializedEvent): EncodedEvent {
  const parse = event.parse_data as { intent?: { name?: unknown } } | undefined;
  const intent = INTENT_KINDS.has(event.event) ? parse?.intent?.name : null;
  const name = event.name;
  const action = ACTION_KINDS.has(event.event) && typeof name === 'string' ? name : null;
  return {
    type: event.event,
    timestamp: event.timestamp,
    intent: typeof intent === 'string' ? intent : null,
    action,
    assistantId: assistantIdOf(event.metadata),
    json: JSON.stringify(event),
  };
}

/** A dialogue event encoded for storage (its wire form is not kept). */
export function encodeEvent(e: DialogueEvent): EncodedEvent {
  return encodeWireEvent(serializeEvent(e));
}

function assistantIdOf(metadata: unknown): string | null {
  const id = (metadata as JsonObject | undefined)?.assistant_id;
  return typeof id === 'string' && id.length > 0 ? id : null;
}
