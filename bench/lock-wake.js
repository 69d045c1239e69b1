'use strict';
// Lock hand-over: how long after the holder of a conversation's lock finishes its work a waiter
// on another instance starts its own (scale-out A.3: p95 ≤ 20 ms; Rasa polls every second).
//
//   npm run build && node bench/lock-wake.js [--handovers 300] [--conversations 10] [--locks 20000]
//
// Two lock store objects per kind, each with its own connections, stand in for two instances
// (one process, the compiled stores of dist/): Redis `concurrent_redis` (REDIS_URL, default
// 127.0.0.1:6379, a key prefix of its own) and PostgreSQL advisory locks; the in-process store
// (one object, two callers) is the same-run floor. Each hand-over: instance A takes the lock,
// B asks for it; once B is seen waiting in the store (its ticket queued in Redis, its advisory
// lock request not granted in pg_locks), A's work ends; the figure is the time from that end to
// the start of B's work (release, wake-up, B's acquisition). A and B swap roles every time.
// Then the cost of an uncontended lock as a turn takes it: --locks lock/unlock cycles over 50
// conversations at once (each leaving a version, as a turn does), per store: locks/s, this
// process's CPU per lock and the server's: Redis's own (INFO cpu), or for PostgreSQL that of
// every postgres process on this machine (a local server).
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards) or
// a throwaway embedded PostgreSQL. Results: console and bench/results/lock-wake.json.
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');
const path = require('node:path');
const { URL } = require('node:url');
const {
  check,
  loadAverage,
  machine,
  need,
  postgresCpuMs,
  round,
  startDatabase,
} = require('./lib/http-bench');
const { ROOT, parseNumberArgs, writeResults } = require('./lib/parley');

const LOCK_TIMEOUT_MS = 30_000;

/** Resolves once `condition()` holds (polled every millisecond or so). */
async function until(condition, what) {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1);
  }
}

/**
 * `handovers` hand-overs between stores[0] and stores[1]; `waiting(id)` tells whether a second
 * caller is queued for conversation `id`. Returns the delays in ms.
 */
async function measure(stores, waiting, opts, label) {
  const delays = [];
  for (let i = 0; i < opts.handovers; i++) {
    const id = `${label}-${i % opts.conversations}`;
    const [a, b] = i % 2 === 0 ? stores : [stores[1], stores[0]];
    let held;
    const holding = new Promise((resolve) => (held = resolve));
    let ended = 0;
    let started = 0;
    const first = a.withLock(id, async () => {
      held();
      await until(() => waiting(id), `a waiter on ${id}`);
      ended = performance.now();
    });
    await holding;
    const second = b.withLock(id, async () => {
      started = performance.now();
    });
    await Promise.all([first, second]);
    check(
      ended > 0 && started >= ended,
      `the second holder started before the first ended (${id})`,
    );
    delays.push(started - ended);
  }
  return delays;
}

/** --locks lock/unlock cycles, 50 conversations at once; `serverCpu()` in seconds, or null. */
async function throughput(store, label, locks, serverCpu) {
  const conversations = 50;
  const cycle = async (c, n) => {
    for (let i = 0; i < n; i++) {
      await store.withLock(`${label}-t${c}`, async (lease) => {
        lease?.leave?.({ generation: 'bench', lastSeq: i + 1 });
      });
    }
  };
  const all = (n) => Promise.all(Array.from({ length: conversations }, (_, c) => cycle(c, n)));
  await all(Math.ceil(locks / conversations / 4)); // warm-up
  const perConversation = Math.ceil(locks / conversations);
  const total = perConversation * conversations;
  const server0 = await serverCpu();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await all(perConversation);
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const server1 = await serverCpu();
  return {
    locks: total,
    'locks/s': round((total / ms) * 1000),
    'client CPU µs/lock': round((cpu.user + cpu.system) / total),
    'server CPU µs/lock': server0 === null ? '' : round(((server1 - server0) * 1e6) / total),
  };
}

function summary(delays) {
  const sorted = [...delays].sort((x, y) => x - y);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    'hand-overs': sorted.length,
    'p50 (ms)': round(at(0.5)),
    'p95 (ms)': round(at(0.95)),
    'p99 (ms)': round(at(0.99)),
    'max (ms)': round(sorted[sorted.length - 1]),
  };
}

async function main() {
  const opts = parseNumberArgs(process.argv.slice(2), {
    handovers: 300,
    conversations: 10,
    locks: 20_000,
  });
  const costs = {};
  const none = async () => null;
  const load = loadAverage({ warn: true });
  const Redis = require('ioredis');
  const { Pool } = require('pg');
  const { InMemoryLockStore } = need('core/index.js');
  const { PostgresLockStore, RedisLockStore } = need('modules/tracker/index.js');
  const rows = {};
  const closers = [];
  const db = await startDatabase();
  try {
    // In-process: one store, two callers.
    const memory = new InMemoryLockStore({ waitTimeoutMs: LOCK_TIMEOUT_MS });
    const queued = new Set();
    const counting = {
      withLock: (id, work) => {
        queued.add(id);
        return memory.withLock(id, () => {
          queued.delete(id);
          return work();
        });
      },
    };
    rows['in-process (reference)'] = summary(
      await measure([counting, counting], (id) => queued.has(id), opts, 'mem'),
    );
    costs['in-process (reference)'] = await throughput(memory, 'mem', opts.locks, none);

    // Redis: two stores with their own connections, one key prefix.
    const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const connection = {
      host: redisUrl.hostname,
      port: Number(redisUrl.port || 6379),
      db: Number(redisUrl.pathname.slice(1) || 0),
      username: redisUrl.username ? decodeURIComponent(redisUrl.username) : null,
      password: redisUrl.password ? decodeURIComponent(redisUrl.password) : null,
      useSsl: redisUrl.protocol === 'rediss:',
      socketTimeoutMs: 2000,
    };
    const keyPrefix = `benchwake${Date.now().toString(36)}`;
    const redisStores = [0, 1].map(
      () =>
        new RedisLockStore({
          connection,
          keyPrefix,
          lifetimeMs: 60_000,
          lockTimeoutMs: LOCK_TIMEOUT_MS,
        }),
    );
    for (const store of redisStores) closers.push(() => store.onApplicationShutdown());
    await Promise.all(redisStores.map((store) => store.start()));
    const probe = new Redis({ ...connection, password: connection.password ?? undefined });
    closers.push(() => probe.quit());
    const queue = (id) => `${keyPrefix}:concurrent_lock:${id}:queue`;
    rows['Redis concurrent_redis'] = summary(
      await measure(redisStores, async (id) => (await probe.zcard(queue(id))) >= 2, opts, 'redis'),
    );
    const redisCpu = async () => {
      const info = await probe.info('cpu');
      const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? NaN);
      return field('used_cpu_user') + field('used_cpu_sys');
    };
    costs['Redis concurrent_redis'] = await throughput(
      redisStores[0],
      'redis',
      opts.locks,
      redisCpu,
    );

    // PostgreSQL: two stores with their own lock pools.
    const pgStores = [0, 1].map(() => new PostgresLockStore(db.url, 2, LOCK_TIMEOUT_MS));
    for (const store of pgStores) closers.push(() => store.onApplicationShutdown());
    const pool = new Pool({ connectionString: db.url, max: 1 });
    closers.push(() => pool.end());
    // The store's lock call and the conversation table it reads: Parley's own migrations.
    const { DataSource } = require('typeorm');
    const { buildTypeOrmOptions } = need('platform/database/typeorm-options.js');
    const { runMigrationsLocked } = need('platform/database/run-migrations.js');
    const migrations = await new DataSource(buildTypeOrmOptions(db.url, 2)).initialize();
    try {
      await runMigrationsLocked(migrations);
    } finally {
      await migrations.destroy();
    }
    const blocked = async () =>
      (
        await pool.query(
          `SELECT count(*)::int AS n FROM pg_locks
           WHERE locktype = 'advisory' AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      ).rows[0].n >= 1;
    rows['PostgreSQL advisory'] = summary(await measure(pgStores, blocked, opts, 'pg'));
    // Every postgres process of this machine (the bench's database server when it is local).
    const postgresCpu = async () => {
      const ms = postgresCpuMs();
      return ms.size === 0 ? null : [...ms.values()].reduce((a, b) => a + b, 0) / 1000;
    };
    costs['PostgreSQL advisory'] = await throughput(pgStores[0], 'pg', opts.locks, postgresCpu);

    console.table(rows);
    console.log('uncontended locks, 50 conversations at once:');
    console.table(costs);
    const target =
      rows['Redis concurrent_redis']['p95 (ms)'] <= 20 &&
      rows['PostgreSQL advisory']['p95 (ms)'] <= 20;
    console.log(`target p95 ≤ 20 ms for Redis and PostgreSQL: ${target ? 'PASS' : 'FAIL'}`);
    console.log(`load ${load.join(' ')}; ${db.kind}; ${JSON.stringify(machine())}`);
    writeResults(path.join(ROOT, 'bench', 'results', 'lock-wake.json'), {
      options: opts,
      rows,
      costs,
      targetPass: target,
      load,
      database: db.kind,
      machine: machine(),
    });
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await db.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
