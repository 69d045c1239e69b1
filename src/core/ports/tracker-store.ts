import { type EncodedEvent } from 'src/core/events/encoded-event';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { type ReminderChanges } from 'src/core/runtime/reminder-changes';

/** Which part of a conversation's event log to read. */
export interface RetrieveOptions {
  /** Only the latest session: events from the last `action_session_start` on (Rasa's `retrieve`). */
  readonly latestSessionOnly?: boolean;
}

/**
 * The version of a stored conversation: `generation` changes whenever the conversation is
 * created anew (first write, replace, delete), `lastSeq` counts its events.
 */
export interface StoreVersion {
  readonly generation: string;
  readonly lastSeq: number;
}

/** A read of the event log together with the version it was read at. */
export interface VersionedEvents {
  readonly events: SerializedEvent[];
  readonly version: StoreVersion;
  /** Position (1-based) of the first returned event in the whole log. */
  readonly firstSeq: number;
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

  /** Like `retrieve`, with the version read; `null` when the conversation does not exist. */
  abstract retrieveVersioned(
    conversationId: string,
    options?: RetrieveOptions,
  ): Promise<VersionedEvents | null>;

  /**
   * The events stored after `after` (read at that version before), with the version read now:
   * how a replica brings a cached copy up to date with what others wrote. `null` when the
   * conversation no longer exists or was created anew since (another generation): read it
   * whole. An empty `events` means nothing was written since.
   */
  abstract retrieveAfter(
    conversationId: string,
    after: StoreVersion,
  ): Promise<VersionedEvents | null>;

  /** The current version, or `null` when the conversation does not exist. */
  abstract version(conversationId: string): Promise<StoreVersion | null>;

  /** Appends events after the ones already stored, atomically (all or none). */
  abstract append(conversationId: string, events: readonly SerializedEvent[]): Promise<void>;

  /**
   * Appends atomically only if the stored conversation is still at `expected` (`null`: it must
   * not exist yet). Returns the new version, or `null` — and writes nothing — when another
   * writer got there first. The events come encoded (`encodeEvent` / `encodeWireEvent`): the
   * message loop writes them without building their wire objects.
   *
   * `reminders`: the turn's reminder changes (`reminderChanges`), written in the same
   * transaction as the events — both are stored, or (a failure, a conflict) neither is. A store
   * that keeps no reminders (an in-memory one given no reminder store) leaves them out.
   */
  abstract appendIfUnchanged(
    conversationId: string,
    events: readonly EncodedEvent[],
    expected: StoreVersion | null,
    reminders?: ReminderChanges,
  ): Promise<StoreVersion | null>;

  /** Replaces every stored event of the conversation with `events`, atomically. */
  abstract replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void>;

  /** Deletes the conversation and its events; `false` when it did not exist. */
  abstract delete(conversationId: string): Promise<boolean>;

  /** Whether at least one event is stored for the conversation. */
  abstract exists(conversationId: string): Promise<boolean>;
}
