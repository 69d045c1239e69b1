import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import {
  echoMessage,
  expectAnsweredStoredOnce,
  postMessage,
  startEchoActionServer,
  storedEvents,
  trainEchoBot,
  waitUntil,
  type Sent,
} from 'test/utils/echobot';
import {
  createNetnsHost,
  netnsUnavailable,
  startNetnsCliServer,
  type NetnsHost,
  type PartitionMode,
} from 'test/utils/netns';
import {
  hasRedisServer,
  startPrivateRedis,
  uniqueKeyPrefix,
  type PrivateRedis,
} from 'test/utils/redis';
import { startTcpProxy, type TcpProxy } from 'test/utils/tcp-proxy';

/**
 * A network partition between one replica and its PostgreSQL and Redis. Two `parley run`
 * processes share one database and the Redis lock store (`concurrent_redis`): replica A in a
 * network namespace whose only route to them is a veth pair the test cuts (link down, or netem
 * loss 100 %), replica B in the root namespace. Requests of the same conversations alternate
 * between A and B.
 *
 * Promised: A goes unready (`/health/ready` 503) within one probe period (5 s); its requests
 * fail closed (503 failure body) within the configured timeouts instead of hanging — the lock
 * store's `socket_timeout`, `DATABASE_QUERY_TIMEOUT_MS` (without it a statement in flight when
 * the packets stop waits until the link heals, and the requests queued behind it in the
 * process up to LOCK_TIMEOUT_MS), `ACTION_SERVER_TIMEOUT_MS`; B keeps serving the same
 * conversations; after the heal A is ready again and serves; every conversation's stored events
 * hold each answered message once with its own turn (a message answered 503 whose statement
 * committed all the same may be stored, once: the counts are printed).
 */

const SKIP = netnsUnavailable();
if (SKIP !== null) process.stdout.write(`network partition fault tests skipped: ${SKIP}\n`);
const describeNetns = SKIP === null ? describe : describe.skip;

/** `socket_timeout` of the lock store (s): how long a Redis command may wait. */
const SOCKET_TIMEOUT_S = 3;
/** DATABASE_QUERY_TIMEOUT_MS: how long an SQL statement may wait for its answer. */
const QUERY_TIMEOUT_MS = 3_000;
/** ACTION_SERVER_TIMEOUT_MS (the action server is reached over the same link). */
const ACTION_TIMEOUT_MS = 3_000;
/** One readiness probe period. */
const PROBE_PERIOD_MS = 5_000;
/** How long each partition lasts. */
const PARTITION_MS = 15_000;
/**
 * How long a request of the partitioned replica may take, from the configured timeouts: one
 * turn's worth (the Redis command, the action call, a read and the write) for a turn of the
 * same conversation queued ahead of it in the process, as much for its own, and slack for a
 * loaded machine.
 */
const FAIL_CLOSED_MS =
  2 * (SOCKET_TIMEOUT_S * 1000 + ACTION_TIMEOUT_MS + 2 * QUERY_TIMEOUT_MS) + 5_000;

/**
 * `startCliServer`, once more when another process took the free port it picked before the
 * server bound it (other test runs share the machine).
 */
async function startOnFreePort(args: string[], env: NodeJS.ProcessEnv): Promise<CliServer> {
  try {
    return await startCliServer(args, env, 120_000);
  } catch (error) {
    if (!String(error).includes('EADDRINUSE')) throw error;
    return startCliServer(args, env, 120_000);
  }
}

describeNetns('network partition between a replica and PostgreSQL / Redis', () => {
  jest.setTimeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-netns-'));
  let host: NetnsHost | undefined;
  const proxies: TcpProxy[] = [];
  let actions: TestActionServer | undefined;
  let a: CliServer | undefined;
  let b: CliServer | undefined;
  let db: Client;
  let privateRedis: PrivateRedis | undefined;

  beforeAll(async () => {
    host = createNetnsHost();
    const ns = host;
    const model = await trainEchoBot(dir);
    actions = await startEchoActionServer();
    const dbUrl = new URL(process.env.DATABASE_URL ?? '');
    const actionUrl = new URL(actions.url);
    // A Redis of this test alone when possible: a stall of the shared one would fail B.
    if (hasRedisServer()) privateRedis = await startPrivateRedis();
    const redisUrl = new URL(
      privateRedis?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    );
    // The namespace's only way to the services: proxies on the root end of the data link.
    const via = async (target: URL, defaultPort: number): Promise<TcpProxy> => {
      const proxy = await startTcpProxy(
        target.hostname,
        Number(target.port || defaultPort),
        ns.hostAddress,
      );
      proxies.push(proxy);
      return proxy;
    };
    const [pgProxy, redisProxy, actionProxy] = [
      await via(dbUrl, 5432),
      await via(redisUrl, 6379),
      await via(actionUrl, 80),
    ];
    const prefix = uniqueKeyPrefix('part');
    const endpoints = (redis: string, port: string | number, action: string): string =>
      [
        'action_endpoint:',
        `  url: "${action}"`,
        'lock_store:',
        '  type: concurrent_redis',
        `  host: ${redis}`,
        `  port: ${port}`,
        `  key_prefix: ${prefix}`,
        `  socket_timeout: ${SOCKET_TIMEOUT_S}`,
        '',
      ].join('\n');
    const fileA = join(dir, 'endpoints-a.yml');
    const fileB = join(dir, 'endpoints-b.yml');
    const proxiedAction = new URL(actions.url);
    proxiedAction.hostname = actionProxy.host;
    proxiedAction.port = String(actionProxy.port);
    writeFileSync(fileA, endpoints(redisProxy.host, redisProxy.port, proxiedAction.toString()));
    writeFileSync(fileB, endpoints(redisUrl.hostname, redisUrl.port || 6379, actions.url));
    const proxiedDb = new URL(dbUrl);
    proxiedDb.hostname = pgProxy.host;
    proxiedDb.port = String(pgProxy.port);
    const env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      PARLEY_NODE_FLAGS: 'none',
      // A ticket of a replica that lost Redis mid-turn holds the conversation at most 5 s.
      TICKET_LOCK_LIFETIME: '5',
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      ACTION_SERVER_TIMEOUT_MS: String(ACTION_TIMEOUT_MS),
    };
    const args = (file: string): string[] => [
      '--enable-api',
      '--model',
      model,
      '--endpoints',
      file,
    ];
    // Each kept as soon as it is up, so afterAll stops it also when the other failed to start.
    await Promise.all([
      startNetnsCliServer(ns, args(fileA), { ...env, DATABASE_URL: proxiedDb.toString() }).then(
        (s) => (a = s),
      ),
      startOnFreePort(args(fileB), env).then((s) => (b = s)),
    ]);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    host?.heal();
    for (const s of [a, b]) if (s?.running()) await s.stop();
    for (const p of proxies) await p.close();
    await actions?.close();
    await db?.end();
    await privateRedis?.stop();
    host?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One readiness answer: its status and when it came. */
  async function probe(base: string): Promise<number> {
    const res = await fetch(`${base}/health/ready`, {
      signal: AbortSignal.timeout(PROBE_PERIOD_MS),
    }).catch(() => null);
    await res?.text();
    return res?.status ?? 0;
  }

  interface Routed extends Sent {
    readonly via: 'a' | 'b';
    readonly at: number;
  }

  it.each<[PartitionMode]>([['down'], ['loss']])(
    'partition by %s: A unready within one probe period and failing closed, B serving the same conversations, all consistent after the heal',
    async (mode) => {
      const ns = host!;
      const [ra, rb] = [a!, b!];
      const sent: Routed[] = [];
      let stopped = false;
      // 40 conversations shared by both replicas: 3 loops post to A, 3 to B, each message to a
      // conversation picked at random, so B never waits on A and both serve the same ones.
      const ids = Array.from(
        { length: 40 },
        (_c, c) => `part-${mode}-${c}-${Math.random().toString(36).slice(2, 8)}`,
      );
      let n = 0;
      const loops = (['a', 'a', 'a', 'b', 'b', 'b'] as const).map(async (via) => {
        while (!stopped) {
          const id = ids[Math.floor(Math.random() * ids.length)] ?? '';
          const at = Date.now();
          const text = echoMessage(`${via}${n++}`);
          const s = await postMessage(via === 'a' ? ra.base : rb.base, id, text, 60_000);
          sent.push({ ...s, via, at });
        }
      });
      const answered = (via: 'a' | 'b', after: number): number =>
        sent.filter((s) => s.via === via && s.at >= after && s.status === 200).length;

      let partitionedAt = 0;
      let unreadyAfterMs = -1;
      let healedAt = 0;
      let readyAfterHealMs = -1;
      try {
        await waitUntil(
          () => answered('a', 0) >= 20 && answered('b', 0) >= 20,
          'turns on A and B',
          60_000,
        );

        ns.partition(mode);
        partitionedAt = Date.now();
        // Probes one after another, as a kubelet would; each answer within its own timeout.
        for (;;) {
          const status = await probe(ra.base);
          if (status === 503) {
            unreadyAfterMs = Date.now() - partitionedAt;
            break;
          }
          expect(Date.now() - partitionedAt).toBeLessThan(PROBE_PERIOD_MS * 3);
        }
        // A stays unready for the whole partition; B stays ready and keeps answering.
        const probes: Array<[number, number]> = [];
        while (Date.now() - partitionedAt < PARTITION_MS) {
          probes.push([await probe(ra.base), await probe(rb.base)]);
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(probes.filter(([pa, pb]) => pa !== 503 || pb !== 200)).toEqual([]);
        expect(answered('b', partitionedAt + PROBE_PERIOD_MS)).toBeGreaterThan(0);

        ns.heal();
        healedAt = Date.now();
        await waitUntil(
          async () => (await probe(ra.base)) === 200,
          'A ready after the heal',
          60_000,
          250,
        );
        readyAfterHealMs = Date.now() - healedAt;
        const readyAgain = Date.now();
        await waitUntil(
          () => answered('a', readyAgain) >= 10 && answered('b', readyAgain) >= 10,
          'turns on A and B after the heal',
          60_000,
        );
      } finally {
        stopped = true;
        ns.heal();
        await Promise.all(loops);
      }

      // A's requests answered after the partition began and sent before the heal.
      const hit = (s: Routed): boolean => s.at + s.ms >= partitionedAt && s.at < healedAt;
      const duringA = sent.filter((s) => s.via === 'a' && hit(s));
      const duringB = sent.filter((s) => s.via === 'b' && hit(s));
      process.stdout.write(
        `partition ${mode}: unready after ${unreadyAfterMs} ms, ready ${readyAfterHealMs} ms after the heal; ` +
          `A during: ${duringA.length} (${duringA.filter((s) => s.status === 200).length} 200, slowest ${Math.max(0, ...duringA.map((s) => s.ms))} ms); ` +
          `A slower than 5 s: ${JSON.stringify(duringA.filter((s) => s.ms > 5_000).map((s) => [s.ms, s.status, s.failure?.slice(0, 160)]))}; ` +
          `B during: ${duringB.length} (${duringB.filter((s) => s.status === 200).length} 200); total ${sent.length}\n`,
      );

      expect(unreadyAfterMs).toBeLessThanOrEqual(PROBE_PERIOD_MS);
      // Before the partition everything was answered.
      const before = sent.filter((s) => s.at + s.ms < partitionedAt);
      expect(
        before.filter((s) => s.status !== 200).map((s) => [s.via, s.status, s.failure]),
      ).toEqual([]);
      // A failed closed: each request answered (no hang) within the timeouts, a 503 failure
      // body unless it was answered 200, with Retry-After.
      for (const s of duringA) {
        expect({
          ms: s.ms <= FAIL_CLOSED_MS,
          status: s.status === 200 || s.status === 503,
        }).toEqual({ ms: true, status: true });
        if (s.status === 503) {
          expect(JSON.parse(s.failure ?? '{}')).toMatchObject({ status: 'failure', code: 503 });
          expect(s.retryAfter).toMatch(/^\d+$/);
        }
      }
      expect(duringA.filter((s) => s.status === 503).length).toBeGreaterThan(0);
      // B, never cut off, answered everything, the same conversations as A among them.
      const ofB = sent.filter((s) => s.via === 'b');
      expect(ofB.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
      const conversationsOfA = new Set(duringA.map((s) => s.sender));
      expect(duringB.some((s) => conversationsOfA.has(s.sender))).toBe(true);
      // After the heal (once A was ready again) everything was answered.
      const afterReady = sent.filter((s) => s.at >= healedAt + readyAfterHealMs);
      expect(
        afterReady.filter((s) => s.status !== 200).map((s) => [s.via, s.status, s.failure]),
      ).toEqual([]);
      for (const s of sent.filter((x) => x.status === 200)) {
        expect(s.replies).toEqual([{ recipient_id: s.sender, text: `echo ${s.text}` }]);
      }

      const { events, unansweredStored } = expectAnsweredStoredOnce(
        sent,
        await storedEvents(db, ids),
      );
      process.stdout.write(
        `partition ${mode}: ${ids.length} conversations, ${events} stored events, ${unansweredStored} unanswered messages stored\n`,
      );
    },
  );
});
