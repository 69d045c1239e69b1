import { type StoreVersion } from 'src/core/ports/tracker-store';

/**
 * The conversation's most recent stored events, handed to the next holder with the version they
 * end at: they were stored right after `after` (`lastSeq` 0: they are the whole conversation),
 * one sequence number each, so the version handed over is `after.lastSeq` plus their number, of
 * the same generation.
 */
export interface HandedOverEvents {
  readonly after: StoreVersion;
  /** The stored events, in order, as one JSON array text (each element as stored). */
  readonly json: string;
}

/**
 * What one holder of a conversation's lock hands to the next, through a lock store shared by
 * several instances: the conversation's stored version as the last holder left it, and the
 * events its turn stored when the store carries them. An instance whose cached session is at
 * that version may use it without asking the database; one whose session is at the version
 * before that turn applies the turn's events instead of reading them.
 */
export interface LockLease {
  /**
   * The stored version the previous holder left, when the store knows it; `undefined` when it
   * does not (no holder left one, a holder died or outlived its lease, a store that keeps
   * none): then the database must be asked.
   */
  readonly lastVersion: StoreVersion | undefined;
  /**
   * The most recent events up to `lastVersion` the previous holder left, when the store hands
   * them over (the Redis lock store does, within a size bound); `undefined` otherwise.
   */
  readonly lastEvents?: HandedOverEvents;
  /**
   * Leaves the version this holder stored for the next one, with the most recent events up to
   * it when it has them (a store may drop them: the next holder then reads). A holder that
   * changes the conversation and does not call this leaves nothing, so the next holder asks the
   * database.
   */
  leave(version: StoreVersion, events?: HandedOverEvents): void;
  /**
   * Whether `leave` would pass events on: a store that hands events over may decline for a
   * conversation that stays on this instance (the Redis lock store does). `false`: the holder
   * need not build them. Absent: as the store's `handsOverEvents()`.
   */
  readonly passesEvents?: boolean;
}

/** The lease of a store that hands nothing over. */
export const NO_LEASE: LockLease = Object.freeze({
  lastVersion: undefined,
  leave(): void {},
});

/**
 * Port: serialises work on one conversation. Everything that reads a tracker, changes it and
 * stores the result runs inside `withLock`, so two requests for the same conversation never
 * interleave; different conversations run in parallel.
 */
export abstract class LockStore {
  /** Runs `work` while holding the conversation's lock; the lock is released however `work` ends. */
  abstract withLock<T>(conversationId: string, work: (lease: LockLease) => Promise<T>): Promise<T>;

  /**
   * Whether the lock is shared with other processes (instances): then a conversation may have
   * been changed elsewhere since this process last held its lock, and what it cached of it must
   * be checked first. `false` only for a lock of one process.
   */
  sharedAcrossProcesses(): boolean {
    return true;
  }

  /**
   * Whether a lease carries the events the previous holder left (`LockLease.lastEvents`): then
   * holders keep their conversations' recent events to hand over. `false` unless a store says so.
   */
  handsOverEvents(): boolean {
    return false;
  }

  /**
   * How many conversations this process can hold locked at once, when the lock itself bounds it
   * (a connection held per lock); null when it does not. Work started in bulk — due reminders —
   * takes no more at a time, so none of it waits in the process for a lock past its timeout.
   */
  concurrentLocks(): number | null {
    return null;
  }
}
