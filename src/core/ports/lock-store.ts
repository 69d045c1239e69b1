/**
 * Port: serialises work on one conversation. Everything that reads a tracker, changes it and
 * stores the result runs inside `withLock`, so two requests for the same conversation never
 * interleave; different conversations run in parallel.
 */
export abstract class LockStore {
  /** Runs `work` while holding the conversation's lock; the lock is released however `work` ends. */
  abstract withLock<T>(conversationId: string, work: () => Promise<T>): Promise<T>;

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
