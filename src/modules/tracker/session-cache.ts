import { type DialogueStateTracker, type StoreVersion } from 'src/core';

/** A conversation's latest session, built, with the store version it reflects. */
export interface CachedSession {
  readonly tracker: DialogueStateTracker;
  /** null: the conversation had no stored event. */
  version: StoreVersion | null;
  /** Position of the session's first event in the whole log (1 = the session is everything). */
  readonly firstSeq: number;
}

/**
 * Least-recently-used cache of built trackers. Entries are only trusted together with a store
 * version check (writes are conditional on it), so a stale entry costs a reload, never a
 * wrong answer; several instances on one database stay correct.
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession>();

  constructor(private readonly capacity: number) {}

  get(conversationId: string): CachedSession | undefined {
    const entry = this.entries.get(conversationId);
    if (entry !== undefined) {
      this.entries.delete(conversationId);
      this.entries.set(conversationId, entry);
    }
    return entry;
  }

  set(conversationId: string, entry: CachedSession): void {
    if (this.capacity <= 0) return;
    this.entries.delete(conversationId);
    this.entries.set(conversationId, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(conversationId: string): void {
    this.entries.delete(conversationId);
  }

  get size(): number {
    return this.entries.size;
  }
}
