import { randomUUID } from 'node:crypto';
import { type LockStore } from 'src/core';

export interface LockStoreOptions {
  /** How long a waiter may wait for a busy conversation (LOCK_TIMEOUT_MS); long when unset. */
  readonly lockTimeoutMs?: number;
}

/** A lock store under test and how to let go of it. */
export interface LockStoreFixture {
  readonly store: LockStore;
  dispose(): Promise<void>;
}

/** Creates a fresh lock store for one test (stores may share a database: ids are unique). */
export type LockStoreFactory = (options?: LockStoreOptions) => Promise<LockStoreFixture>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A promise with its resolver, to hold a lock until the test lets go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * The LockStore port's contract (src/core/ports/lock-store.ts), run against every
 * implementation: `describeLockStoreContract('InMemoryLockStore', factory)`.
 */
export function describeLockStoreContract(name: string, factory: LockStoreFactory): void {
  describe(`LockStore contract: ${name}`, () => {
    const fixtures: LockStoreFixture[] = [];
    const make = async (options?: LockStoreOptions): Promise<LockStore> => {
      const fixture = await factory(options);
      fixtures.push(fixture);
      return fixture.store;
    };
    const id = (label = 'c') => `${label}-${randomUUID()}`;
    let locks: LockStore;

    beforeEach(async () => {
      locks = await make();
    });
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((f) => f.dispose()));
    });

    it('passes the work’s value through', async () => {
      const value = { answer: 42 };
      await expect(locks.withLock(id(), () => Promise.resolve(value))).resolves.toBe(value);
      await expect(locks.withLock(id(), () => Promise.resolve(undefined))).resolves.toBeUndefined();
    });

    it('passes the work’s error through and releases the lock', async () => {
      const c = id();
      const boom = new Error('boom');
      await expect(locks.withLock(c, () => Promise.reject(boom))).rejects.toBe(boom);
      await expect(locks.withLock(c, () => Promise.resolve('again'))).resolves.toBe('again');
    });

    it('releases the lock when the work throws before returning a promise', async () => {
      const c = id();
      const work = (): Promise<never> => {
        throw new Error('sync boom');
      };
      await expect(locks.withLock(c, work)).rejects.toThrow('sync boom');
      await expect(locks.withLock(c, () => Promise.resolve('again'))).resolves.toBe('again');
    });

    it('hands the lock on to waiters after a failure', async () => {
      const c = id();
      const held = gate();
      const failing = locks.withLock(c, async () => {
        await held.promise;
        throw new Error('boom');
      });
      const waiters = [1, 2, 3].map((n) => locks.withLock(c, () => Promise.resolve(n)));
      held.open();
      await expect(failing).rejects.toThrow('boom');
      await expect(Promise.all(waiters)).resolves.toEqual([1, 2, 3]);
    });

    it('loses no update among 50 concurrent read-modify-writes of one conversation', async () => {
      const c = id();
      let counter = 0;
      let active = 0;
      let maxActive = 0;
      await Promise.all(
        Array.from({ length: 50 }, () =>
          locks.withLock(c, async () => {
            active++;
            maxActive = Math.max(maxActive, active);
            const read = counter;
            await sleep(1);
            counter = read + 1;
            active--;
          }),
        ),
      );
      expect(counter).toBe(50);
      expect(maxActive).toBe(1);
    });

    it('runs different conversations in parallel', async () => {
      const a = id('a');
      const b = id('b');
      const bRan = gate();
      // a holds its lock until b's work has run: that only ends if b is not blocked by a.
      const first = locks.withLock(a, async () => {
        await bRan.promise;
        return 'a';
      });
      const second = locks.withLock(b, () => {
        bRan.open();
        return Promise.resolve('b');
      });
      await expect(Promise.all([first, second])).resolves.toEqual(['a', 'b']);
    });

    it('runs many conversations at once, each exclusive', async () => {
      const ids = Array.from({ length: 8 }, () => id('many'));
      const counters = new Map(ids.map((c) => [c, 0]));
      const running = new Set<string>();
      let overlapping = 0;
      await Promise.all(
        ids.flatMap((c) =>
          Array.from({ length: 5 }, () =>
            locks.withLock(c, async () => {
              expect(running.has(c)).toBe(false);
              running.add(c);
              overlapping = Math.max(overlapping, running.size);
              const read = counters.get(c) ?? 0;
              await sleep(2);
              counters.set(c, read + 1);
              running.delete(c);
            }),
          ),
        ),
      );
      expect([...counters.values()]).toEqual(ids.map(() => 5));
      expect(overlapping).toBeGreaterThan(1);
    });

    it('lets work take the lock of another conversation', async () => {
      const a = id('a');
      const b = id('b');
      const got = await locks.withLock(a, () => locks.withLock(b, () => Promise.resolve('both')));
      expect(got).toBe('both');
      await expect(locks.withLock(b, () => Promise.resolve('b free'))).resolves.toBe('b free');
    });

    describe('with a lock timeout', () => {
      it('gives a waiter the lock when it is freed within the timeout', async () => {
        const timed = await make({ lockTimeoutMs: 2000 });
        const c = id();
        const holder = timed.withLock(c, () => sleep(100).then(() => 'held'));
        await sleep(10);
        await expect(timed.withLock(c, () => Promise.resolve('next'))).resolves.toBe('next');
        await expect(holder).resolves.toBe('held');
      });

      it('gives up with LOCK.TIMEOUT when held too long, then works again', async () => {
        const timed = await make({ lockTimeoutMs: 200 });
        const c = id();
        const held = gate();
        const holder = timed.withLock(c, () => held.promise.then(() => 'held'));
        await sleep(20);
        const started = Date.now();
        let ran = false;
        await expect(
          timed.withLock(c, () => {
            ran = true;
            return Promise.resolve();
          }),
        ).rejects.toMatchObject({ code: 'LOCK.TIMEOUT' });
        expect(ran).toBe(false);
        expect(Date.now() - started).toBeLessThan(2000);
        const later = timed.withLock(c, () => Promise.resolve('later'));
        held.open();
        await expect(holder).resolves.toBe('held');
        await expect(later).resolves.toBe('later');
        // the other conversations were never held up
        await expect(timed.withLock(id(), () => Promise.resolve('free'))).resolves.toBe('free');
      });
    });
  });
}
