import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestActionServer } from 'test/utils/action-server';
import { freePort } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import {
  acknowledged,
  message,
  post,
  sleep,
  spawnReplica,
  startEchoActions,
  storedTurns,
  trainEchoModel,
  waitReady,
  type Replica,
  type Sent,
} from './fault-replicas';
import { postgresBinaries, startPrivatePostgres, type PrivatePostgres } from './private-postgres';

/**
 * PostgreSQL restart under load (scale-reliability §6 B.6): two `parley run` replicas on a
 * PostgreSQL cluster of this test alone (PostgreSQL advisory lock store), 10 client connections
 * each, every client posting one message after the other to its own conversation, and
 * `/health/ready` of each replica polled every ~100 ms. The database is stopped with
 * `pg_ctl stop -m fast`, then — another round — `-m immediate` (a crash: the next start runs
 * recovery), and started again once every replica reports 503 (or after 5 s).
 *
 * The spec's deadlines: each replica's readiness says 503 within 5 s of the outage and 200
 * within 2 s of the database accepting connections again; requests fail (503 in the failure
 * body) only from the outage until 2 s after the database is back; no replica exits; and every
 * acknowledged message is stored with its whole turn (read with SQL afterwards).
 */
const CLIENTS_PER_REPLICA = 10;
const UNREADY_DEADLINE_MS = 5000;
const READY_AGAIN_DEADLINE_MS = 2000;
const ERROR_WINDOW_SLACK_MS = 2000;

interface Probe {
  readonly sentAt: number;
  /** When the answer came. */
  readonly at: number;
  readonly status: number;
  readonly body: string;
}

const found = postgresBinaries();
const describeWithPostgresBinaries = 'bin' in found ? describe : describe.skip;
if (!('bin' in found)) {
  process.stdout.write(`PostgreSQL restart faults skipped: ${found.missing}\n`);
}

describeWithPostgresBinaries('PostgreSQL restart under load', () => {
  jest.setTimeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-pg-restart-'));
  const replicas: Replica[] = [];
  let pg: PrivatePostgres;
  let actions: TestActionServer;

  beforeAll(async () => {
    if (!('bin' in found)) return;
    pg = await startPrivatePostgres(found.bin);
    const model = await trainEchoModel(dir);
    actions = await startEchoActions({ delayMs: 10, record: false });
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: pg.url,
      LOCK_STORE: 'postgres',
      LOG_LEVEL: 'warn',
      PARLEY_NODE_FLAGS: 'none',
      OIDC_EMBEDDED: 'false',
      DATABASE_POOL_SIZE: '10',
    };
    const args = ['--enable-api', '--model', model, '--endpoints', endpoints];
    for (let i = 0; i < 2; i++) replicas.push(spawnReplica(await freePort(), args, env));
    const started = await Promise.all(replicas.map((r) => waitReady(r, 180_000)));
    if (started.some((ms) => ms === null)) {
      throw new Error(`a replica did not start:\n${replicas.map((r) => r.output()).join('\n')}`);
    }
  }, 300_000);

  afterAll(async () => {
    for (const r of replicas) r.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await actions?.close();
    await pg?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** When the database first answers `SELECT 1` on a new connection, from now on. */
  async function acceptsConnections(): Promise<number> {
    for (;;) {
      const client = new Client({ connectionString: pg.url, connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('SELECT 1');
        return Date.now();
      } catch {
        await sleep(20);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  it('answers 503 through a fast and an immediate stop, is ready again within 2 s, stays up and loses no acknowledged turn', async () => {
    const conversations = replicas.flatMap((r) =>
      Array.from({ length: CLIENTS_PER_REPLICA }, () => ({ replica: r, id: uniqueId('pgr') })),
    );
    const sent: Sent[] = [];
    const probes: Probe[][] = replicas.map(() => []);
    let stop = false;

    const clients = conversations.map(async ({ replica, id }, c) => {
      for (let n = 0; !stop; n++) {
        const s = await post(replica.base, id, message(`${c}-${n}`));
        sent.push(s);
        if (!acknowledged(s)) await sleep(20);
      }
    });
    // A probe every 100 ms, each on its own (a slow answer does not delay the next probe);
    // one that takes over 3 s counts as not ready.
    const inFlight: Array<Promise<void>> = [];
    const probing = replicas.map(async (replica, i) => {
      while (!stop) {
        const sentAt = Date.now();
        inFlight.push(
          fetch(`${replica.base}/health/ready`, { signal: AbortSignal.timeout(3000) })
            .then(async (res) => ({ status: res.status, body: await res.text() }))
            .catch(() => ({ status: 0, body: '' }))
            .then(({ status, body }) => {
              probes[i]?.push({ sentAt, at: Date.now(), status, body });
            }),
        );
        await sleep(100);
      }
    });
    /** Resolves once every replica's probes show `status` at or after `since` (or when stopped). */
    const allReport = async (status: number, since: number, giveUpMs: number): Promise<void> => {
      const until = Date.now() + giveUpMs;
      while (
        Date.now() < until &&
        !probes.every((list) => list.some((p) => p.at >= since && p.status === status))
      ) {
        await sleep(20);
      }
    };
    /** Every client has had an acknowledged message that started after `since`. */
    const allServed = async (since: number, giveUpMs: number): Promise<void> => {
      const until = Date.now() + giveUpMs;
      const served = (id: string): boolean =>
        sent.some((s) => s.sender === id && s.startedAt >= since && acknowledged(s));
      while (Date.now() < until && !conversations.every(({ id }) => served(id))) await sleep(50);
    };

    const rounds: Array<{
      mode: 'fast' | 'immediate';
      outage: number;
      accepting: number;
      unreadyAfter: number[];
      readyAfter: number[];
      notReady: string[];
    }> = [];
    try {
      // Warm: every conversation answered before the first fault.
      await allServed(0, 60_000);
      for (const mode of ['fast', 'immediate'] as const) {
        const outage = Date.now();
        await pg.stop(mode);
        // The database stays down until every replica says 503 (the spec allows 5 s).
        await allReport(503, outage, UNREADY_DEADLINE_MS + 1000);
        const starting = pg.start();
        const accepting = await acceptsConnections();
        await starting;
        await allReport(200, accepting, 30_000);
        const first = (status: number, since: number): number[] =>
          probes.map((list) => {
            const p = list.find((x) => x.at >= since && x.status === status);
            return p === undefined ? Infinity : p.at - since;
          });
        rounds.push({
          mode,
          outage,
          accepting,
          unreadyAfter: first(503, outage),
          readyAfter: first(200, accepting),
          // What readiness said last before it was 200 again (tells a late recovery's cause).
          notReady: probes.map(
            (list) =>
              [...list].reverse().find((x) => x.at >= accepting && x.status !== 200)?.body ?? '',
          ),
        });
        // Load goes on until every conversation took a turn again.
        await allServed(accepting, 60_000);
      }
    } finally {
      stop = true;
      await Promise.all([...clients, ...probing]);
      await Promise.all(inFlight);
    }

    process.stdout.write(
      `postgres restart: ${sent.length} requests, ${sent.filter((s) => !acknowledged(s)).length} failed; ` +
        rounds
          .map(
            (r) =>
              `${r.mode}: down ${r.accepting - r.outage} ms, 503 after [${r.unreadyAfter.join(', ')}] ms, ` +
              `200 after [${r.readyAfter.join(', ')}] ms`,
          )
          .join('; ') +
        '\n',
    );

    // No process exit.
    for (const r of replicas) expect(r.running()).toBe(true);

    // Readiness: 503 within 5 s of the outage, 200 within 2 s of the database accepting.
    expect(rounds.map((r) => r.mode)).toEqual(['fast', 'immediate']);
    const late = rounds.flatMap((r) =>
      r.unreadyAfter.flatMap((ms, replica) =>
        ms <= UNREADY_DEADLINE_MS ? [] : [{ mode: r.mode, replica, unreadyAfterMs: ms }],
      ),
    );
    const slow = rounds.flatMap((r) =>
      r.readyAfter.flatMap((ms, replica) =>
        ms <= READY_AGAIN_DEADLINE_MS
          ? []
          : [{ mode: r.mode, replica, readyAfterMs: ms, said: r.notReady[replica]?.slice(0, 400) }],
      ),
    );
    expect(late).toEqual([]);
    expect(slow).toEqual([]);

    // Requests failed only in an outage (until 2 s after the database was back), with 503.
    const failed = sent.filter((s) => !acknowledged(s));
    expect(failed.length).toBeGreaterThan(0);
    const outside = failed.filter(
      (s) =>
        !rounds.some(
          (r) => s.endedAt >= r.outage && s.endedAt <= r.accepting + ERROR_WINDOW_SLACK_MS,
        ),
    );
    expect(outside.map((s) => [s.status, s.endedAt, s.failure])).toEqual([]);
    expect(failed.filter((s) => s.status !== 503).map((s) => [s.status, s.failure])).toEqual([]);

    // Every acknowledged message is stored with its whole turn, once (SQL).
    const db = new Client({ connectionString: pg.url });
    await db.connect();
    try {
      const problems: string[] = [];
      for (const { id } of conversations) {
        const { texts, problems: wrong } = await storedTurns(db, id);
        problems.push(...wrong);
        const stored = new Set(texts);
        if (stored.size !== texts.length) problems.push(`${id}: a message stored twice`);
        for (const s of sent.filter((x) => x.sender === id && acknowledged(x))) {
          if (!stored.has(s.text)) problems.push(`${id}: acknowledged ${s.text} is missing`);
        }
      }
      expect(problems).toEqual([]);
    } finally {
      await db.end();
    }
  });
});
