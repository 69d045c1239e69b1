import { type StoreVersion } from 'src/core/ports/tracker-store';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { type RecentEvents } from './recent-events';

/** A conversation's latest session, built, with the store version it reflects. */
export interface CachedSession {
  readonly tracker: DialogueStateTracker;
  /** null: the conversation had no stored event. */
  version: StoreVersion | null;
  /** Position of the session's first event in the whole log (1 = the session is everything). */
  readonly firstSeq: number;
  /** Estimated memory the built session holds (see {@link estimateJsonSize}), in bytes. */
  bytes: number;
  /**
   * Its most recent stored events as JSON, kept only when the lock store hands events over
   * (their length is counted in `bytes`).
   */
  recent: RecentEvents;
}

/** V8 objects, the tracker's state and the kept wire form take several times the JSON size. */
export const MEMORY_PER_JSON_CHAR = 4;

/**
 * About the length of `JSON.stringify(value)`, without building the string: a walk over the
 * value with a work limit of its own size, for the cache's memory accounting.
 */
export function estimateJsonSize(value: unknown): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') size += 8;
    else if (v === null || v === undefined) size += 4;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      size += 2;
      for (const key in v) {
        size += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return size;
}

/**
 * Least-recently-used cache of built trackers, bounded by the number of conversations and by
 * the estimated bytes they hold (a few huge conversations cannot fill the heap). Entries are only trusted together with a store
 * version check (writes are conditional on it), so a stale entry costs a reload, never a
 * wrong answer; several instances on one database stay correct.
 */
export class SessionCache {
  private readonly entries = new Map<string, CachedSession>();
  private totalBytes = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  get(conversationId: string): CachedSession | undefined {
    const entry = this.entries.get(conversationId);
    if (entry !== undefined) {
      this.entries.delete(conversationId);
      this.entries.set(conversationId, entry);
    }
    return entry;
  }

  set(conversationId: string, entry: CachedSession): void {
    this.delete(conversationId);
    if (this.capacity <= 0 || entry.bytes > this.maxBytes) return;
    this.entries.set(conversationId, entry);
    this.totalBytes += entry.bytes;
    while (this.entries.size > this.capacity || this.totalBytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
    }
  }

  delete(conversationId: string): void {
    const entry = this.entries.get(conversationId);
    if (entry === undefined) return;
    this.entries.delete(conversationId);
    this.totalBytes -= entry.bytes;
  }

  /** Estimated bytes of every cached session. */
  get bytes(): number {
    return this.totalBytes;
  }

  get size(): number {
    return this.entries.size;
  }
}
