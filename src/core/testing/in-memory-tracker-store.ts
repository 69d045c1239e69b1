import { ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { type RetrieveOptions, TrackerStore } from 'src/core/ports/tracker-store';

function copy(events: readonly SerializedEvent[]): SerializedEvent[] {
  return JSON.parse(JSON.stringify(events)) as SerializedEvent[];
}

function isSessionStart(event: SerializedEvent): boolean {
  return event.event === 'action' && event.name === ACTION_SESSION_START_NAME;
}

/**
 * TrackerStore in memory (Rasa's `InMemoryTrackerStore`): for tests and single-process runs.
 * Events are copied in and out, so callers never share objects with the store.
 */
export class InMemoryTrackerStore extends TrackerStore {
  private readonly conversations = new Map<string, SerializedEvent[]>();

  retrieve(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<SerializedEvent[] | null> {
    const events = this.conversations.get(conversationId);
    if (events === undefined) return Promise.resolve(null);
    if (!options.latestSessionOnly) return Promise.resolve(copy(events));
    let start = 0;
    for (let i = events.length - 1; i >= 0; i--) {
      if (isSessionStart(events[i] as SerializedEvent)) {
        start = i;
        break;
      }
    }
    return Promise.resolve(copy(events.slice(start)));
  }

  append(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    const stored = this.conversations.get(conversationId) ?? [];
    this.conversations.set(conversationId, [...stored, ...copy(events)]);
    return Promise.resolve();
  }

  replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    this.conversations.set(conversationId, copy(events));
    return Promise.resolve();
  }

  delete(conversationId: string): Promise<boolean> {
    return Promise.resolve(this.conversations.delete(conversationId));
  }

  exists(conversationId: string): Promise<boolean> {
    return Promise.resolve((this.conversations.get(conversationId)?.length ?? 0) > 0);
  }

  /** Ids of every stored conversation. */
  keys(): string[] {
    return [...this.conversations.keys()];
  }
}
