import type { SerializedEvent } from 'src/core/events/serialized-event';

/** Which part of a conversation's event log to read. */
export interface RetrieveOptions {
  /** Only the latest session: events from the last `action_session_start` on (Rasa's `retrieve`). */
  readonly latestSessionOnly?: boolean;
}

/**
 * Port: the append-only event log of every conversation. Events are stored exactly as they
 * travel on the wire (Rasa's `event.as_dict()` JSON), in order.
 */
export abstract class TrackerStore {
  /** The stored events of a conversation, oldest first; `null` when no event was ever stored. */
  abstract retrieve(
    conversationId: string,
    options?: RetrieveOptions,
  ): Promise<SerializedEvent[] | null>;

  /** Appends events after the ones already stored, atomically (all or none). */
  abstract append(conversationId: string, events: readonly SerializedEvent[]): Promise<void>;

  /** Replaces every stored event of the conversation with `events`, atomically. */
  abstract replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void>;

  /** Deletes the conversation and its events; `false` when it did not exist. */
  abstract delete(conversationId: string): Promise<boolean>;

  /** Whether at least one event is stored for the conversation. */
  abstract exists(conversationId: string): Promise<boolean>;
}
