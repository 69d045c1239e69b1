import { DialogueError } from 'src/core/errors/dialogue-error';
import { LockStore, NO_LEASE, type LockLease } from 'src/core/ports/lock-store';

export interface InMemoryLockStoreOptions {
  /** Give up waiting for a busy conversation after this many ms (`LOCK.TIMEOUT`); none by default. */
  readonly waitTimeoutMs?: number;
}

/**
 * Per-conversation mutex for a single process (the default lock store, like Rasa's in-memory
 * ticket lock): each conversation has a promise chain, so work on one conversation runs one at a
 * time in arrival order (FIFO) while different conversations run in parallel. Idle conversations
 * hold no memory.
 */
export class InMemoryLockStore extends LockStore {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly options: InMemoryLockStoreOptions = {}) {
    super();
  }

  /** One process only: whatever it last wrote of a conversation is still the latest. */
  override sharedAcrossProcesses(): boolean {
    return false;
  }

  async withLock<T>(conversationId: string, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const previous = this.tails.get(conversationId) ?? Promise.resolve();
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The next waiter runs once the previous holder and this one are done.
    const tail = previous.then(() => released);
    this.tails.set(conversationId, tail);
    try {
      await this.waitFor(previous, conversationId);
      return await work(NO_LEASE);
    } finally {
      release();
      if (this.tails.get(conversationId) === tail) this.tails.delete(conversationId);
    }
  }

  /** Number of conversations currently locked or waited for (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }

  private waitFor(previous: Promise<void>, conversationId: string): Promise<void> {
    const timeout = this.options.waitTimeoutMs;
    if (timeout === undefined) return previous;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new DialogueError(
              'LOCK.TIMEOUT',
              `Could not acquire the lock of conversation '${conversationId}' within ${timeout} ms.`,
            ),
          ),
        timeout,
      );
    });
    return Promise.race([previous, expired]).finally(() => clearTimeout(timer));
  }
}
