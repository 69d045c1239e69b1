import { OnApplicationShutdown } from '@nestjs/common';
import { DialogueError, LockStore, type LockLease } from 'src/core';
import { counter, histogram } from 'src/platform/metrics/registry';

const waitSeconds = () =>
  histogram(
    'parley_lock_wait_seconds',
    'Time a turn waited for its conversation lock, by lock store',
    ['store'],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
const acquireFailures = () =>
  counter(
    'parley_lock_acquire_failures_total',
    'Turns that could not take their conversation lock, by lock store and reason',
    ['store', 'reason'],
  );

/**
 * Any LockStore, measured: `parley_lock_wait_seconds{store}` (from the call until the work
 * starts) and `parley_lock_acquire_failures_total{store,reason}` (the lock was never taken:
 * `timeout`, `unavailable` or `error`). The work's own failures are not counted.
 */
export class MeteredLockStore extends LockStore implements OnApplicationShutdown {
  private readonly wait = waitSeconds();
  private readonly failures = acquireFailures();

  constructor(
    readonly inner: LockStore,
    private readonly store: string,
  ) {
    super();
  }

  override sharedAcrossProcesses(): boolean {
    return this.inner.sharedAcrossProcesses();
  }

  override handsOverEvents(): boolean {
    return this.inner.handsOverEvents();
  }

  override concurrentLocks(): number | null {
    return this.inner.concurrentLocks();
  }

  async withLock<T>(conversationId: string, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    let acquired = false;
    try {
      return await this.inner.withLock(conversationId, (lease) => {
        acquired = true;
        this.wait.observe({ store: this.store }, Number(process.hrtime.bigint() - started) / 1e9);
        return work(lease);
      });
    } catch (err) {
      if (!acquired) this.failures.inc({ store: this.store, reason: reasonOf(err) });
      throw err;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const inner = this.inner as Partial<OnApplicationShutdown>;
    await inner.onApplicationShutdown?.();
  }
}

function reasonOf(err: unknown): string {
  if (err instanceof DialogueError) {
    if (err.code === 'LOCK.TIMEOUT') return 'timeout';
    if (err.code === 'LOCK.STORE_UNAVAILABLE') return 'unavailable';
  }
  return 'error';
}
