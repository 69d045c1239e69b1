import { type Counter, type Histogram } from 'prom-client';
import { InMemoryLockStore } from 'src/core';
import { metricsRegistry } from 'src/platform/metrics/registry';
import { MeteredLockStore } from './metered-lock-store';

async function waitCount(store: string): Promise<number> {
  const metric = metricsRegistry.getSingleMetric('parley_lock_wait_seconds') as Histogram;
  const values = (await metric.get()).values;
  return (
    values.find(
      (v) => v.metricName === 'parley_lock_wait_seconds_count' && v.labels.store === store,
    )?.value ?? 0
  );
}

async function failures(store: string, reason: string): Promise<number> {
  const metric = metricsRegistry.getSingleMetric('parley_lock_acquire_failures_total') as Counter;
  const values = (await metric.get()).values;
  return values.find((v) => v.labels.store === store && v.labels.reason === reason)?.value ?? 0;
}

describe('MeteredLockStore', () => {
  it('says what the store it measures says about sharing and concurrent locks', () => {
    class TwoAtATime extends InMemoryLockStore {
      override concurrentLocks(): number {
        return 2;
      }
    }
    const locks = new MeteredLockStore(new TwoAtATime(), 'unit-c');
    expect(locks.concurrentLocks()).toBe(2);
    expect(locks.sharedAcrossProcesses()).toBe(false);
    expect(new MeteredLockStore(new InMemoryLockStore(), 'unit-d').concurrentLocks()).toBeNull();
  });

  it('observes the wait of every turn that got its lock, and passes the work through', async () => {
    const locks = new MeteredLockStore(new InMemoryLockStore(), 'unit-a');
    await expect(locks.withLock('c', () => Promise.resolve(7))).resolves.toBe(7);
    await expect(
      locks.withLock('c', () => Promise.reject(new Error('work failed'))),
    ).rejects.toThrow('work failed');
    expect(await waitCount('unit-a')).toBe(2);
    // A failure of the work itself is not a failure to lock.
    expect(await failures('unit-a', 'error')).toBe(0);
  });

  it('counts a turn that could not take its lock, by reason', async () => {
    const locks = new MeteredLockStore(new InMemoryLockStore({ waitTimeoutMs: 20 }), 'unit-b');
    let release!: () => void;
    const holder = locks.withLock('c', () => new Promise<void>((r) => (release = r)));
    await expect(locks.withLock('c', () => Promise.resolve())).rejects.toMatchObject({
      code: 'LOCK.TIMEOUT',
    });
    release();
    await holder;
    expect(await failures('unit-b', 'timeout')).toBe(1);
    expect(await waitCount('unit-b')).toBe(1);
  });
});
