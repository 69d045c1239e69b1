import { type StoreVersion } from 'src/core/ports/tracker-store';

/**
 * What one holder of a conversation's lock hands to the next, through a lock store shared by
 * several instances: the conversation's stored version as the last holder left it. An instance
 * whose cached session is at that version may use it without asking the database.
 */
export interface LockLease {
  /**
   * The stored version the previous holder left, when the store knows it; `undefined` when it
   * does not (no holder left one, a holder died or outlived its lease, a store that keeps
   * none): then the database must be asked.
   */
  readonly lastVersion: StoreVersion | undefined;
  /**
   * Leaves the version this holder stored for the next one. A holder that changes the
   * conversation and does not call this leaves nothing, so the next holder asks the database.
   */
  leave(version: StoreVersion): void;
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
   * How many conversations this process can hold locked at once, when the lock itself bounds it
   * (a connection held per lock); null when it does not. Work started in bulk — due reminders —
   * takes no more at a time, so none of it waits in the process for a lock past its timeout.
   */
  concurrentLocks(): number | null {
    return null;
  }
}
