import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
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

/** An event received on the wire, encoded for storage as it is. */
export function encodeWireEvent(event: SerializedEvent): EncodedEvent {
  const parse = event.parse_data as { intent?: { name?: unknown } } | undefined;
  const intent = event.event === 'user' ? parse?.intent?.name : null;
  const name = event.name;
  const action =
    (event.event === 'action' || event.event === 'action_execution_rejected') &&
    typeof name === 'string'
      ? name
      : null;
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
