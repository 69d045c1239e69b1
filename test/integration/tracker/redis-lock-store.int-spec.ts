import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { RedisLockStore, type RedisLockStoreOptions } from 'src/modules/tracker';
import {
  describeWithRedis,
  hasRedisServer,
  redisConnection,
  startPrivateRedis,
  uniqueKeyPrefix,
  type TestRedis,
} from 'test/utils/redis';
import { startTcpProxy } from 'test/utils/tcp-proxy';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Keys under a prefix (SCAN: a test may look; the store never does). */
async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found.sort();
}

/**
 * One conversation held by `a`, then `b`, then `a`: each store has taken over a version the
 * other stored, so both pass events on (conversations move between them).
 */
async function crossed(a: RedisLockStore, b: RedisLockStore): Promise<void> {
  const conversation = `warm-${randomUUID()}`;
  let n = 0;
  for (const store of [a, b, a]) {
    await store.withLock(conversation, (lease) => {
      lease.leave({ generation: 'w', lastSeq: ++n });
      return Promise.resolve();
    });
  }
}

describeWithRedis('RedisLockStore across instances and faults', (redis) => {
  const stores: RedisLockStore[] = [];
  let admin: Redis;

  const make = async (
    target: Pick<TestRedis, 'url'>,
    overrides: Partial<RedisLockStoreOptions> = {},
  ): Promise<RedisLockStore> => {
    const store = new RedisLockStore({
      connection: redisConnection(target),
      keyPrefix: null,
      lifetimeMs: 60_000,
      lockTimeoutMs: 20_000,
      ...overrides,
    });
    stores.push(store);
    await store.start();
    return store;
  };
  /** Two stores (instances) on one key prefix. */
  const twoInstances = async (
    label: string,
  ): Promise<{ keyPrefix: string; a: RedisLockStore; b: RedisLockStore }> => {
    const keyPrefix = uniqueKeyPrefix(label);
    return {
      keyPrefix,
      a: await make(redis(), { keyPrefix }),
      b: await make(redis(), { keyPrefix }),
    };
  };

  beforeAll(() => {
    admin = new Redis(redis().url);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.onApplicationShutdown()));
  });
  afterAll(async () => {
    await admin.quit();
  });

  it('lets one writer at a time through two instances, and leaves no key behind', async () => {
    const keyPrefix = uniqueKeyPrefix('two');
    const a = await make(redis(), { keyPrefix });
    const b = await make(redis(), { keyPrefix });
    const conversation = `c-${randomUUID()}`;
    let counter = 0;
    let active = 0;
    let maxActive = 0;
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).withLock(conversation, async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          const read = counter;
          await sleep(1);
          counter = read + 1;
          active--;
        }),
      ),
    );
    expect(counter).toBe(40);
    expect(maxActive).toBe(1);
    expect(await keysUnder(admin, `${keyPrefix}:`)).toEqual([]);
  });

  it("stores tickets in Rasa's concurrent_redis key shape, with the lease as TTL", async () => {
    const keyPrefix = uniqueKeyPrefix('shape');
    const store = await make(redis(), { keyPrefix, lifetimeMs: 30_000 });
    const conversation = `c-${randomUUID()}`;
    const base = `${keyPrefix}:concurrent_lock:${conversation}:`;
    const seen = await store.withLock(conversation, async () => ({
      keys: await keysUnder(admin, base),
      ttl: await admin.pttl(`${base}1`),
      counter: await admin.get(`${base}last_issued_ticket_number`),
    }));
    expect(seen.keys).toEqual([`${base}1`, `${base}last_issued_ticket_number`, `${base}queue`]);
    expect(seen.ttl).toBeGreaterThan(0);
    expect(seen.ttl).toBeLessThanOrEqual(30_000);
    expect(seen.counter).toBe('1');
    expect(await keysUnder(admin, base)).toEqual([]);
  });

  it('wakes a waiter of another instance on release, without waiting for a re-check', async () => {
    const keyPrefix = uniqueKeyPrefix('wake');
    // Re-checks are 10 minutes apart: only the release message can hand the lock on in time.
    const a = await make(redis(), { keyPrefix, recheckMs: 600_000 });
    const b = await make(redis(), { keyPrefix, recheckMs: 600_000 });
    const conversation = `c-${randomUUID()}`;
    const held = gate();
    const order: string[] = [];
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const holder = a.withLock(conversation, async () => {
      order.push('a');
      entered();
      await held.promise;
    });
    await holding;
    const waiter = b.withLock(conversation, () => {
      order.push('b');
      return Promise.resolve('b ran');
    });
    await sleep(100);
    expect(order).toEqual(['a']);
    held.open();
    await holder;
    await expect(waiter).resolves.toBe('b ran');
    expect(order).toEqual(['a', 'b']);
  });

  it('hands the lock on when the holder outlives its lease (a crashed instance)', async () => {
    const keyPrefix = uniqueKeyPrefix('lease');
    const crashed = await make(redis(), { keyPrefix, lifetimeMs: 300 });
    const next = await make(redis(), { keyPrefix, lifetimeMs: 300, recheckMs: 50 });
    const conversation = `c-${randomUUID()}`;
    const never = gate();
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    const stuck = crashed.withLock(conversation, () => {
      entered();
      return never.promise;
    });
    await holding;
    await expect(next.withLock(conversation, () => Promise.resolve('next'))).resolves.toBe('next');
    never.open();
    await stuck;
  });

  it('hands the stored version a holder leaves to the next holder, on another instance, once', async () => {
    const { a, b } = await twoInstances('handover');
    const conversation = `c-${randomUUID()}`;
    const seen: unknown[] = [];
    await a.withLock(conversation, (lease) => {
      seen.push(lease.lastVersion);
      lease.leave({ generation: 'gen 1', lastSeq: 7 });
      return Promise.resolve();
    });
    // Handed over to the next holder; this one changes nothing it reports, so it leaves none.
    await b.withLock(conversation, (lease) => Promise.resolve(seen.push(lease.lastVersion)));
    await a.withLock(conversation, (lease) => Promise.resolve(seen.push(lease.lastVersion)));
    expect(seen).toEqual([undefined, { generation: 'gen 1', lastSeq: 7 }, undefined]);
  });

  it("hands a holder's recent events over with its version, once, and drops them past the size bound", async () => {
    const { keyPrefix, a, b } = await twoInstances('handover-events');
    await crossed(a, b);
    const conversation = `c-${randomUUID()}`;
    const json = '[{"event":"slot","name":"x","value":"caf\u00e9 \\n"},{"event":"action"}]';
    await a.withLock(conversation, (lease) => {
      lease.leave(
        { generation: 'gen 1', lastSeq: 9 },
        { after: { generation: 'gen 1', lastSeq: 7 }, json },
      );
      return Promise.resolve();
    });
    const seen: unknown[] = [];
    await b.withLock(conversation, (lease) => {
      seen.push([lease.lastVersion, lease.lastEvents]);
      // Events too large to keep in Redis: the version alone goes on.
      lease.leave(
        { generation: 'gen 1', lastSeq: 10 },
        { after: { generation: 'gen 1', lastSeq: 9 }, json: `[${'"x",'.repeat(20_000)}"x"]` },
      );
      return Promise.resolve();
    });
    await a.withLock(conversation, (lease) => {
      seen.push([lease.lastVersion, lease.lastEvents]);
      return Promise.resolve();
    });
    await b.withLock(conversation, (lease) => {
      seen.push([lease.lastVersion, lease.lastEvents]);
      return Promise.resolve();
    });
    expect(seen).toEqual([
      [
        { generation: 'gen 1', lastSeq: 9 },
        { after: { generation: 'gen 1', lastSeq: 7 }, json },
      ],
      [{ generation: 'gen 1', lastSeq: 10 }, undefined],
      [undefined, undefined],
    ]);
    // The events are kept for minutes, not for the version's hour.
    await a.withLock(conversation, (lease) => {
      lease.leave(
        { generation: 'g', lastSeq: 2 },
        { after: { generation: 'g', lastSeq: 1 }, json: '[{}]' },
      );
      return Promise.resolve();
    });
    const base = `${keyPrefix}:concurrent_lock:${conversation}:`;
    const turnTtl = await admin.pttl(`${base}recent_events`);
    expect(turnTtl).toBeGreaterThan(0);
    expect(turnTtl).toBeLessThanOrEqual(5 * 60_000);
    expect(await admin.pttl(`${base}version`)).toBeGreaterThan(5 * 60_000);
  });

  it('passes events on only once conversations move between instances', async () => {
    const { a, b } = await twoInstances('handover-moved');
    const conversation = `c-${randomUUID()}`;
    const seen: unknown[] = [];
    const turn = (store: RedisLockStore, n: number): Promise<void> =>
      store.withLock(conversation, (lease) => {
        seen.push([lease.passesEvents, lease.lastVersion?.lastSeq, lease.lastEvents?.json]);
        lease.leave(
          { generation: 'g', lastSeq: n },
          { after: { generation: 'g', lastSeq: n - 1 }, json: `[{"n":${n}}]` },
        );
        return Promise.resolve();
      });
    for (const [store, n] of [
      [a, 1],
      [a, 2],
      [b, 3],
      [a, 4],
      [a, 5],
      [b, 6],
    ] as const) {
      await turn(store, n);
    }
    expect(seen).toEqual([
      // One instance so far: the next holder is this one again, with the events cached.
      [false, undefined, undefined],
      [false, 1, undefined],
      // b takes over a version a stored: conversations move here, so holders pass events on.
      [true, 2, undefined],
      [true, 3, '[{"n":3}]'],
      [true, 4, '[{"n":4}]'],
      [true, 5, '[{"n":5}]'],
    ]);
  });

  it('a holder that outlived its lease hands nothing over, not even after it ends', async () => {
    const keyPrefix = uniqueKeyPrefix('handover-lease');
    const slow = await make(redis(), { keyPrefix, lifetimeMs: 300 });
    const next = await make(redis(), { keyPrefix, lifetimeMs: 300, recheckMs: 50 });
    const conversation = `c-${randomUUID()}`;
    await next.withLock(conversation, (lease) => {
      lease.leave({ generation: 'g', lastSeq: 1 });
      return Promise.resolve();
    });
    const late = gate();
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => (entered = resolve));
    let slowSaw: unknown;
    const stuck = slow.withLock(conversation, async (lease) => {
      slowSaw = lease.lastVersion;
      entered();
      await late.promise;
      lease.leave(
        { generation: 'g', lastSeq: 2 },
        { after: { generation: 'g', lastSeq: 1 }, json: '[{}]' },
      );
    });
    await holding;
    // The slow holder took the version: the one after its lease ran out gets none.
    const overtaking = await next.withLock(conversation, (lease) => {
      lease.leave({ generation: 'g', lastSeq: 3 });
      return Promise.resolve(lease.lastVersion);
    });
    late.open();
    await stuck;
    // Its release clears what the overtaking holder left: which write came last is not known.
    const after = await next.withLock(conversation, (lease) =>
      Promise.resolve([lease.lastVersion, lease.lastEvents]),
    );
    expect([slowSaw, overtaking, after]).toEqual([
      { generation: 'g', lastSeq: 1 },
      undefined,
      [undefined, undefined],
    ]);
  });

  it('fails closed within socket_timeout + 1 s while Redis hangs, and recovers after', async () => {
    const target = new URL(redis().url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || '6379'));
    try {
      const socketTimeoutMs = 1000;
      const proxied = { url: `redis://127.0.0.1:${proxy.port}${target.pathname}` };
      const store = await make(proxied, {
        keyPrefix: uniqueKeyPrefix('hang'),
        connection: redisConnection(proxied, socketTimeoutMs),
        lockTimeoutMs: 5_000,
      });
      const conversation = `c-${randomUUID()}`;
      await expect(store.withLock(conversation, () => Promise.resolve(1))).resolves.toBe(1);
      proxy.freeze();
      let ran = false;
      const started = Date.now();
      await expect(
        store.withLock(conversation, () => {
          ran = true;
          return Promise.resolve();
        }),
      ).rejects.toMatchObject({ code: 'LOCK.STORE_UNAVAILABLE', details: { retry_after: 1 } });
      expect(Date.now() - started).toBeLessThan(socketTimeoutMs + 1000);
      expect(ran).toBe(false);
      proxy.thaw();
      // The ticket Redis issued after the client had given up is given back: the conversation
      // is free again well before the 60 s lease (the lock timeout here is 5 s).
      await expect(store.withLock(conversation, () => Promise.resolve('again'))).resolves.toBe(
        'again',
      );
    } finally {
      await proxy.close();
    }
  });

  (hasRedisServer() ? describe : describe.skip)('with a private redis-server', () => {
    it('fails closed at once while Redis is down, and recovers without a restart', async () => {
      const own = await startPrivateRedis();
      try {
        const store = await make(own, { keyPrefix: uniqueKeyPrefix('down') });
        const conversation = `c-${randomUUID()}`;
        await expect(store.withLock(conversation, () => Promise.resolve(1))).resolves.toBe(1);
        await own.stop();
        let ran = false;
        const started = Date.now();
        await expect(
          store.withLock(conversation, () => {
            ran = true;
            return Promise.resolve();
          }),
        ).rejects.toMatchObject({ code: 'LOCK.STORE_UNAVAILABLE' });
        expect(Date.now() - started).toBeLessThan(2000 + 1000);
        expect(ran).toBe(false);
        await own.start();
        expect(await retryUntil(() => store.withLock(conversation, () => Promise.resolve(2)))).toBe(
          2,
        );
      } finally {
        await own.stop();
      }
    });

    it('wakes waiters again after Redis restarts: the wake-up channel is subscribed anew', async () => {
      const own = await startPrivateRedis();
      try {
        const keyPrefix = uniqueKeyPrefix('resub');
        // Re-checks and the lock timeout are 10 minutes away: only the release message can hand
        // the lock on before the test's timeout.
        const slow = { keyPrefix, recheckMs: 600_000, lockTimeoutMs: 600_000 };
        const a = await make(own, slow);
        const b = await make(own, slow);
        await own.stop();
        await own.start();
        const conversation = `c-${randomUUID()}`;
        await retryUntil(() => a.withLock(conversation, () => Promise.resolve()));
        await retryUntil(() => b.withLock(conversation, () => Promise.resolve()));
        // Both connections are back; the subscriptions follow their `ready` at once.
        await sleep(200);
        const held = gate();
        let entered!: () => void;
        const holding = new Promise<void>((resolve) => (entered = resolve));
        const holder = a.withLock(conversation, async () => {
          entered();
          await held.promise;
        });
        await holding;
        const waiter = b.withLock(conversation, () => Promise.resolve('b ran'));
        await sleep(100);
        held.open();
        await holder;
        await expect(waiter).resolves.toBe('b ran');
      } finally {
        await own.stop();
      }
    });

    it('starts while Redis is down, answers 503 meanwhile, then locks once it is up', async () => {
      const own = await startPrivateRedis();
      await own.stop();
      try {
        const store = await make(own, { keyPrefix: uniqueKeyPrefix('late') });
        const conversation = `c-${randomUUID()}`;
        await expect(store.withLock(conversation, () => Promise.resolve(1))).rejects.toMatchObject({
          code: 'LOCK.STORE_UNAVAILABLE',
        });
        await own.start();
        expect(await retryUntil(() => store.withLock(conversation, () => Promise.resolve(3)))).toBe(
          3,
        );
      } finally {
        await own.stop();
      }
    });
  });
});

/** Retries while the lock store is unavailable, for at most 5 s (the recovery target). */
async function retryUntil<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if ((err as { code?: string }).code !== 'LOCK.STORE_UNAVAILABLE' || Date.now() > deadline) {
        throw err;
      }
      await sleep(100);
    }
  }
}
