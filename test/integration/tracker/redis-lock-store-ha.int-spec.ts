import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  parseStoreEndpoints,
  readStoreEndpoints,
  RedisLockStore,
  type RedisConnectionSettings,
} from 'src/modules/tracker';
import { uniqueKeyPrefix } from 'test/utils/redis';
import {
  describeWithRedisCluster,
  describeWithRedisSentinel,
  describeWithTlsRedis,
} from 'test/utils/redis-ha';

/**
 * The Redis lock store in Rasa's high-availability and TLS spellings (`deployment_mode`
 * cluster / sentinel, `endpoints`, `sentinel_service`, `use_ssl` with `ssl_*` files), against
 * private servers started by this file: a three-master Redis Cluster, a master with a replica
 * watched by a Sentinel, and a TLS-only redis-server requiring client certificates.
 */

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Closes a test's own connection: QUIT, or when the connection is already gone (a failover
 * moved the master, a loaded machine dropped it) just the socket, so cleanup never fails a run.
 */
async function closeQuietly(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** The connection an endpoints.yml `lock_store` entry resolves to (as `parley run` reads it). */
function lockStoreEntry(entry: Record<string, unknown>): RedisConnectionSettings {
  const parsed = parseStoreEndpoints('endpoints.yml', {
    lock_store: { type: 'concurrent_redis', socket_timeout: 2, ...entry },
  });
  if (parsed.lockStore?.type !== 'redis') throw new Error('not a Redis lock store');
  return parsed.lockStore.connection;
}

function storeFactory() {
  const stores: RedisLockStore[] = [];
  const make = async (
    connection: RedisConnectionSettings,
    keyPrefix: string,
    extra: { recheckMs?: number; lockTimeoutMs?: number; lifetimeMs?: number } = {},
  ): Promise<RedisLockStore> => {
    const store = new RedisLockStore({
      connection,
      keyPrefix,
      lifetimeMs: extra.lifetimeMs ?? 60_000,
      lockTimeoutMs: extra.lockTimeoutMs ?? 20_000,
      ...(extra.recheckMs !== undefined ? { recheckMs: extra.recheckMs } : {}),
    });
    stores.push(store);
    await store.start();
    return store;
  };
  const disposeAll = () => Promise.all(stores.splice(0).map((s) => s.onApplicationShutdown()));
  return { make, disposeAll };
}

/** Keys under a prefix on one server (SCAN: a test may look; the store never does). */
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

/** Many turns of one conversation through two instances: one at a time, none lost. */
async function twoInstancesOneWriter(a: RedisLockStore, b: RedisLockStore, conversation: string) {
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
  return { counter, maxActive };
}

/** `b` waits for `a`; re-checks are 10 min apart, so only the release message lets `b` in. */
async function wakeAcrossInstances(a: RedisLockStore, b: RedisLockStore): Promise<string[]> {
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
    return Promise.resolve();
  });
  await sleep(100);
  order.push('released');
  held.open();
  await holder;
  await waiter;
  return order;
}

describeWithRedisCluster(
  'RedisLockStore on a Redis Cluster (deployment_mode: cluster)',
  (cluster) => {
    jest.setTimeout(30_000);
    const { make, disposeAll } = storeFactory();
    let masters: Redis[] = [];
    const connection = () =>
      lockStoreEntry({ deployment_mode: 'cluster', endpoints: cluster().endpoints });

    beforeAll(() => {
      masters = cluster().ports.map((port) => new Redis({ host: '127.0.0.1', port }));
    });
    afterEach(disposeAll);
    afterAll(async () => {
      await Promise.all(masters.map(closeQuietly));
    });

    const keysOnEachMaster = (prefix: string) =>
      Promise.all(masters.map((m) => keysUnder(m, prefix)));

    it('lets one writer at a time through two instances, and leaves no key on any master', async () => {
      const keyPrefix = uniqueKeyPrefix('cl');
      const a = await make(connection(), keyPrefix);
      const b = await make(connection(), keyPrefix);
      const result = await twoInstancesOneWriter(a, b, `c-${randomUUID()}`);
      expect(result).toEqual({ counter: 40, maxActive: 1 });
      expect((await keysOnEachMaster(`${keyPrefix}:`)).flat()).toEqual([]);
    });

    it('keeps each conversation in one slot, and spreads conversations over the masters', async () => {
      const keyPrefix = uniqueKeyPrefix('slot');
      const store = await make(connection(), keyPrefix);
      const conversations = Array.from({ length: 24 }, () => `c-${randomUUID()}`);
      const held = gate();
      let entered = 0;
      let allIn!: () => void;
      const allHolding = new Promise<void>((resolve) => (allIn = resolve));
      const turns = conversations.map((c) =>
        store.withLock(c, async () => {
          if (++entered === conversations.length) allIn();
          await held.promise;
        }),
      );
      await allHolding;
      const onMasters = await keysOnEachMaster(`${keyPrefix}:`);
      held.open();
      await Promise.all(turns);

      for (const c of conversations) {
        // Ticket 1, the counter and the queue of the conversation, all on exactly one master.
        const counts = onMasters.map(
          (keys) => keys.filter((k) => keyOf(k, keyPrefix) === c).length,
        );
        expect(counts.filter((n) => n > 0)).toEqual([3]);
      }
      expect(onMasters.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
      expect((await keysOnEachMaster(`${keyPrefix}:`)).flat()).toEqual([]);
    });

    it.each(['a}b', '}starts-with-a-brace', '{x}y', 'plain'])(
      'keeps the keys of conversation %j in one slot',
      async (conversation) => {
        const keyPrefix = uniqueKeyPrefix('brace');
        const store = await make(connection(), keyPrefix);
        const onMasters = await store.withLock(conversation, () =>
          keysOnEachMaster(`${keyPrefix}:`),
        );
        const holding = onMasters.filter((keys) => keys.length > 0);
        expect(holding).toHaveLength(1);
        expect(holding[0]).toHaveLength(3);
        const slots = await Promise.all(
          (holding[0] ?? []).map((k) => (masters[0] as Redis).cluster('KEYSLOT', k)),
        );
        expect(new Set(slots).size).toBe(1);
      },
    );

    it('wakes a waiter of another instance on release (pub/sub across the cluster)', async () => {
      const keyPrefix = uniqueKeyPrefix('clwake');
      const slow = { recheckMs: 600_000, lockTimeoutMs: 600_000 };
      // Two instances seeded from different masters: their wake-up subscriptions may sit on
      // different nodes, and the message must still reach them.
      const [first, second] = cluster().endpoints;
      const a = await make(
        lockStoreEntry({ deployment_mode: 'cluster', endpoints: [first] }),
        keyPrefix,
        slow,
      );
      const b = await make(
        lockStoreEntry({ deployment_mode: 'cluster', endpoints: [second] }),
        keyPrefix,
        slow,
      );
      expect(await wakeAcrossInstances(a, b)).toEqual(['a', 'released', 'b']);
    });
  },
);

/** The conversation id of a cluster key `<prefix>:concurrent_lock:{<id>}:<rest>`, or null. */
function keyOf(key: string, keyPrefix: string): string | null {
  const head = `${keyPrefix}:concurrent_lock:{`;
  if (!key.startsWith(head)) return null;
  const rest = key.slice(head.length);
  for (const suffix of ['}:1', '}:last_issued_ticket_number', '}:queue']) {
    if (rest.endsWith(suffix)) return rest.slice(0, -suffix.length);
  }
  return null;
}

describeWithRedisSentinel(
  'RedisLockStore through Redis Sentinel (deployment_mode: sentinel)',
  (sentinel) => {
    jest.setTimeout(60_000);
    const { make, disposeAll } = storeFactory();
    const connection = () =>
      lockStoreEntry({
        deployment_mode: 'sentinel',
        endpoints: sentinel().endpoints,
        sentinel_service: sentinel().service,
        db: 2,
      });
    afterEach(disposeAll);

    it('locks on the master the sentinel names, in the configured db', async () => {
      const keyPrefix = uniqueKeyPrefix('sn');
      const a = await make(connection(), keyPrefix);
      const b = await make(connection(), keyPrefix);
      const master = new Redis({ host: '127.0.0.1', port: await sentinel().masterPort(), db: 2 });
      try {
        const conversation = `c-${randomUUID()}`;
        const seen = await a.withLock(conversation, () =>
          keysUnder(master, `${keyPrefix}:concurrent_lock:${conversation}:`),
        );
        expect(seen).toHaveLength(3);
        expect(await twoInstancesOneWriter(a, b, conversation)).toEqual({
          counter: 40,
          maxActive: 1,
        });
        expect(await keysUnder(master, `${keyPrefix}:`)).toEqual([]);
      } finally {
        await closeQuietly(master);
      }
    });

    it('wakes a waiter of another instance on release', async () => {
      const keyPrefix = uniqueKeyPrefix('snwake');
      const slow = { recheckMs: 600_000, lockTimeoutMs: 600_000 };
      const a = await make(connection(), keyPrefix, slow);
      const b = await make(connection(), keyPrefix, slow);
      expect(await wakeAcrossInstances(a, b)).toEqual(['a', 'released', 'b']);
    });

    it('follows a failover to the new master, failing closed meanwhile', async () => {
      const keyPrefix = uniqueKeyPrefix('snfail');
      const store = await make(connection(), keyPrefix);
      const conversation = `c-${randomUUID()}`;
      await expect(store.withLock(conversation, () => Promise.resolve(1))).resolves.toBe(1);
      const before = await sentinel().masterPort();
      const after = await sentinel().failover();
      expect(after).not.toBe(before);
      const newMaster = new Redis({ host: '127.0.0.1', port: after, db: 2 });
      try {
        // Turns fail with 503 (never run unlocked) until the store is on the new master.
        const deadline = Date.now() + 30_000;
        let seen: string[] | null = null;
        while (seen === null) {
          try {
            seen = await store.withLock(conversation, () =>
              keysUnder(newMaster, `${keyPrefix}:concurrent_lock:${conversation}:`),
            );
          } catch (err) {
            if ((err as { code?: string }).code !== 'LOCK.STORE_UNAVAILABLE') throw err;
            if (Date.now() > deadline) throw err;
            await sleep(200);
          }
        }
        // The ticket of that turn was on the new master.
        expect(seen).toHaveLength(3);
      } finally {
        await closeQuietly(newMaster);
      }
    });
  },
);

describeWithTlsRedis('RedisLockStore over TLS (use_ssl with ssl_* files)', (redis) => {
  jest.setTimeout(30_000);
  const { make, disposeAll } = storeFactory();
  const entry = (files: Record<string, string>) =>
    lockStoreEntry({ host: '127.0.0.1', port: redis().port, db: 0, use_ssl: true, ...files });
  const withClientCert = () => ({
    ssl_certfile: redis().files.clientCert,
    ssl_keyfile: redis().files.clientKey,
  });
  afterEach(disposeAll);

  it('locks through a TLS-only server with the CA and a client certificate', async () => {
    const keyPrefix = uniqueKeyPrefix('tls');
    const connection = entry({ ...withClientCert(), ssl_ca_certs: redis().files.caCert });
    const a = await make(connection, keyPrefix);
    const b = await make(connection, keyPrefix);
    expect(await twoInstancesOneWriter(a, b, `c-${randomUUID()}`)).toEqual({
      counter: 40,
      maxActive: 1,
    });
  });

  it('fails closed when the server certificate is not signed by ssl_ca_certs', async () => {
    const store = await make(
      entry({ ...withClientCert(), ssl_ca_certs: redis().files.otherCaCert }),
      uniqueKeyPrefix('tlsca'),
    );
    let ran = false;
    await expect(
      store.withLock(`c-${randomUUID()}`, () => {
        ran = true;
        return Promise.resolve();
      }),
    ).rejects.toMatchObject({ code: 'LOCK.STORE_UNAVAILABLE' });
    expect(ran).toBe(false);
  });

  it('fails closed without the client certificate the server requires', async () => {
    const store = await make(
      entry({ ssl_ca_certs: redis().files.caCert }),
      uniqueKeyPrefix('tlsnc'),
    );
    await expect(
      store.withLock(`c-${randomUUID()}`, () => Promise.resolve()),
    ).rejects.toMatchObject({
      code: 'LOCK.STORE_UNAVAILABLE',
    });
  });

  it('refuses to start when an ssl_* file is missing, naming the key', async () => {
    const missing = join(redis().files.dir, 'missing-ca.crt');
    expect(
      () =>
        new RedisLockStore({
          connection: entry({ ...withClientCert(), ssl_ca_certs: missing }),
          keyPrefix: null,
          lifetimeMs: 60_000,
          lockTimeoutMs: 1000,
        }),
    ).toThrow(/lock_store\.ssl_ca_certs: cannot read '.*missing-ca\.crt' \(ENOENT\)/);

    const file = join(redis().files.dir, 'endpoints.yml');
    writeFileSync(
      file,
      [
        'lock_store:',
        '  type: concurrent_redis',
        `  port: ${redis().port}`,
        '  use_ssl: true',
        `  ssl_certfile: ${redis().files.clientCert}`,
        `  ssl_keyfile: ${join(redis().files.dir, 'missing.key')}`,
        '',
      ].join('\n'),
    );
    await expect(readStoreEndpoints(file)).rejects.toMatchObject({
      code: 'CONFIG.INVALID',
      message: expect.stringContaining('lock_store.ssl_keyfile: cannot read') as unknown,
    });
  });
});
