import { randomUUID } from 'node:crypto';
import { ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { type EncodedEvent } from 'src/core/events/encoded-event';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import {
  type RetrieveOptions,
  type StoreVersion,
  TrackerStore,
  type VersionedEvents,
} from 'src/core/ports/tracker-store';
import { type InMemoryReminderStore } from 'src/core/runtime/in-memory-reminder-store';
import { type ReminderChanges } from 'src/core/runtime/reminder-changes';

function copy(events: readonly SerializedEvent[]): SerializedEvent[] {
  return JSON.parse(JSON.stringify(events)) as SerializedEvent[];
}

function isSessionStart(event: SerializedEvent): boolean {
  return event.event === 'action' && event.name === ACTION_SESSION_START_NAME;
}

interface Stored {
  generation: string;
  events: SerializedEvent[];
}

/**
 * TrackerStore in memory (Rasa's `InMemoryTrackerStore`): for tests and single-process runs.
 * Events are copied in and out, so callers never share objects with the store. Given a
 * reminder store, a conditional append applies the turn's reminder changes to it in the same
 * synchronous step as the events; without one, reminders are not kept.
 */
export class InMemoryTrackerStore extends TrackerStore {
  private readonly conversations = new Map<string, Stored>();

  constructor(private readonly reminders: InMemoryReminderStore | null = null) {
    super();
  }

  async retrieve(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<SerializedEvent[] | null> {
    return (await this.retrieveVersioned(conversationId, options))?.events ?? null;
  }

  retrieveVersioned(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<VersionedEvents | null> {
    const stored = this.conversations.get(conversationId);
    if (stored === undefined) return Promise.resolve(null);
    const { events } = stored;
    let start = 0;
    if (options.latestSessionOnly) {
      for (let i = events.length - 1; i >= 0; i--) {
        if (isSessionStart(events[i] as SerializedEvent)) {
          start = i;
          break;
        }
      }
    }
    return Promise.resolve({
      events: copy(events.slice(start)),
      version: { generation: stored.generation, lastSeq: events.length },
      firstSeq: start + 1,
    });
  }

  retrieveAfter(conversationId: string, after: StoreVersion): Promise<VersionedEvents | null> {
    const stored = this.conversations.get(conversationId);
    if (stored === undefined || stored.generation !== after.generation) {
      return Promise.resolve(null);
    }
    return Promise.resolve({
      events: copy(stored.events.slice(after.lastSeq)),
      version: { generation: stored.generation, lastSeq: stored.events.length },
      firstSeq: after.lastSeq + 1,
    });
  }

  version(conversationId: string): Promise<StoreVersion | null> {
    const stored = this.conversations.get(conversationId);
    return Promise.resolve(
      stored ? { generation: stored.generation, lastSeq: stored.events.length } : null,
    );
  }

  append(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    this.write(conversationId, copy(events));
    return Promise.resolve();
  }

  /** Appends events the store owns already (copied or parsed), synchronously. */
  private write(conversationId: string, events: SerializedEvent[]): void {
    if (events.length === 0) return;
    const stored = this.conversations.get(conversationId);
    if (stored) stored.events.push(...events);
    else this.conversations.set(conversationId, { generation: randomUUID(), events });
  }

  /** Checks and appends in one synchronous step: concurrent writers cannot both pass the check. */
  appendIfUnchanged(
    conversationId: string,
    events: readonly EncodedEvent[],
    expected: StoreVersion | null,
    reminders?: ReminderChanges,
  ): Promise<StoreVersion | null> {
    const stored = this.conversations.get(conversationId);
    const same =
      stored === undefined
        ? expected === null
        : expected !== null &&
          stored.generation === expected.generation &&
          stored.events.length === expected.lastSeq;
    if (!same) return Promise.resolve(null);
    this.write(
      conversationId,
      events.map((e) => JSON.parse(e.json) as SerializedEvent),
    );
    if (reminders !== undefined && events.length > 0) {
      this.reminders?.apply(conversationId, reminders);
    }
    return this.version(conversationId);
  }

  replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    this.conversations.delete(conversationId);
    this.write(conversationId, copy(events));
    return Promise.resolve();
  }

  delete(conversationId: string): Promise<boolean> {
    return Promise.resolve(this.conversations.delete(conversationId));
  }

  exists(conversationId: string): Promise<boolean> {
    return Promise.resolve((this.conversations.get(conversationId)?.events.length ?? 0) > 0);
  }

  /** Ids of every stored conversation. */
  keys(): string[] {
    return [...this.conversations.keys()];
  }
}
