import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestActionServer } from 'test/utils/action-server';
import { freePort } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import { describeWithRedis, uniqueKeyPrefix } from 'test/utils/redis';
import { startRoundRobinProxy, type RoundRobinProxy } from 'test/utils/round-robin-proxy';
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

/**
 * kill -9 chaos (scale-reliability §6 B.5): two `parley run` replicas on one PostgreSQL with the
 * Redis lock store, behind a round-robin proxy, under 50 client connections that each post one
 * message after the other to a conversation of their own. At random moments a random replica is
 * killed with SIGKILL and started again at once on its port; each restart must be ready
 * (`/health/ready` 200) within 10 s. Afterwards, from the stored events (SQL): every acknowledged
 * message is there exactly once, every stored user event is followed by its complete turn, and
 * once the lock lease has run out a fresh message to every conversation succeeds (no lock left
 * behind by a killed holder).
 *
 * CRASH_KILLS sets the number of kills (default 100). Each kill waits for both replicas to be
 * ready (one always serves), so a run takes about CRASH_KILLS × (start-up time + ≤ 1 s).
 */
const KILLS = Number(process.env.CRASH_KILLS ?? 100);
const CLIENTS = 50;
const PER_CONVERSATION = 20;
/** The spec's deadline for a restarted replica to be ready. */
const READY_DEADLINE_MS = 10_000;
/** A restart slower than this is a hang: the run stops instead of waiting for ever. */
const RESTART_GIVE_UP_MS = 90_000;
/** Longest random wait before the next kill. */
const KILL_SPREAD_MS = 1000;
/** The Redis lock lease (TICKET_LOCK_LIFETIME): what a killed holder keeps a conversation for. */
const LEASE_SECONDS = 3;
/** Each action call takes this long: kills land mid-turn. */
const ACTION_DELAY_MS = 20;

describeWithRedis('kill -9 chaos over two replicas', (redis) => {
  // A hang guard only: every restart may take up to its give-up time on a loaded machine.
  jest.setTimeout(KILLS * (RESTART_GIVE_UP_MS + KILL_SPREAD_MS) + 300_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-kill-chaos-'));
  const slots: Replica[] = [];
  const ready: boolean[] = [false, false];
  const ports: number[] = [];
  let args: string[];
  let env: NodeJS.ProcessEnv;
  let actions: TestActionServer;
  let proxy: RoundRobinProxy;
  let db: Client;

  beforeAll(async () => {
    const model = await trainEchoModel(dir);
    actions = await startEchoActions({ delayMs: ACTION_DELAY_MS, record: false });
    const { host, port } = redis();
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      `action_endpoint:\n  url: "${actions.url}"\n` +
        `lock_store:\n  type: concurrent_redis\n  host: ${host}\n  port: ${port}\n` +
        `  key_prefix: ${uniqueKeyPrefix('chaos')}\n`,
    );
    args = ['--enable-api', '--model', model, '--endpoints', endpoints];
    env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      // One process per replica (no launcher), so SIGKILL hits the server itself.
      PARLEY_NODE_FLAGS: 'none',
      OIDC_EMBEDDED: 'false',
      DATABASE_POOL_SIZE: '10',
      TICKET_LOCK_LIFETIME: String(LEASE_SECONDS),
      LOCK_TIMEOUT_MS: '20000',
      ACTION_SERVER_TIMEOUT_MS: '10000',
    };
    ports.push(await freePort(), await freePort());
    for (const [slot, port] of ports.entries()) slots[slot] = spawnReplica(port, args, env);
    const first = await Promise.all(slots.map((r) => waitReady(r, 180_000)));
    if (first.some((ms) => ms === null)) {
      throw new Error(`a replica did not start:\n${slots.map((r) => r.output()).join('\n')}`);
    }
    ready.fill(true);
    proxy = await startRoundRobinProxy(
      ports.map((p) => `http://127.0.0.1:${p}`),
      { checkMs: 100 },
    );
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    for (const r of slots) r?.kill('SIGKILL');
    await Promise.all(slots.map((r) => r?.exited));
    await proxy?.close();
    await actions?.close();
    await db?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`loses, halves and doubles no acknowledged message over ${KILLS} kills, and leaves no lock behind`, async () => {
    const conversations: string[] = [];
    const sent: Sent[] = [];
    let stop = false;

    // 50 connections: each posts to a conversation, one message after the other, and moves on
    // to a new conversation every PER_CONVERSATION messages (a tracker, sent whole to the
    // action server every turn, stays the size of a real conversation over a long run).
    const clients = Array.from({ length: CLIENTS }, async (_, c) => {
      let id = '';
      for (let n = 0; !stop; n++) {
        if (n % PER_CONVERSATION === 0) {
          id = uniqueId('chaos');
          conversations.push(id);
        }
        const s = await post(proxy.url, id, message(`${c}-${n}`));
        sent.push(s);
        if (!acknowledged(s)) await sleep(50);
      }
    });

    const restarts: Array<{ slot: number; readyMs: number | null }> = [];
    let failedRestart: string | undefined;
    const restart = async (slot: number): Promise<void> => {
      const replica = spawnReplica(ports[slot] as number, args, env);
      slots[slot] = replica;
      const readyMs = await waitReady(replica, RESTART_GIVE_UP_MS);
      restarts.push({ slot, readyMs });
      if (readyMs === null) failedRestart = replica.output();
      else ready[slot] = true;
    };

    let kills = 0;
    const pending: Array<Promise<void>> = [];
    try {
      while (kills < KILLS && failedRestart === undefined) {
        // One replica always serves: the next kill waits until both are ready.
        while (!ready.every(Boolean) && failedRestart === undefined) await sleep(20);
        if (failedRestart !== undefined) break;
        await sleep(Math.random() * KILL_SPREAD_MS);
        const slot = Math.random() < 0.5 ? 0 : 1;
        const victim = slots[slot] as Replica;
        ready[slot] = false;
        victim.kill('SIGKILL');
        await victim.exited;
        kills++;
        pending.push(restart(slot));
      }
      await Promise.all(pending);
    } finally {
      stop = true;
      await Promise.all(clients);
    }
    expect(failedRestart).toBeUndefined();
    expect(kills).toBe(KILLS);

    // Each restart is to be ready within the deadline (asserted at the end).
    const slow = restarts.filter((r) => r.readyMs === null || r.readyMs > READY_DEADLINE_MS);
    const times = restarts.map((r) => r.readyMs ?? Infinity).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const s of sent) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
    process.stdout.write(
      `kill chaos: ${kills} kills, ${sent.length} requests (${JSON.stringify(statuses)}), ` +
        `restart ready median ${times[Math.floor(times.length / 2)]} ms, max ${times[times.length - 1]} ms\n`,
    );

    // The kills hurt: some requests were cut (else nothing was proven).
    expect(sent.some((s) => !acknowledged(s))).toBe(true);
    // A non-acknowledged request failed outright: never a 200 with the wrong reply or a 500.
    expect(sent.filter((s) => s.status === 200 && !acknowledged(s))).toEqual([]);
    expect(sent.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);

    const problems: string[] = [];
    const bySender = new Map<string, Sent[]>();
    for (const s of sent) bySender.set(s.sender, [...(bySender.get(s.sender) ?? []), s]);
    for (const id of conversations) {
      const { texts, problems: found } = await storedTurns(db, id);
      problems.push(...found);
      const stored = new Set(texts);
      if (stored.size !== texts.length) problems.push(`${id}: a message stored twice`);
      for (const s of (bySender.get(id) ?? []).filter(acknowledged)) {
        if (!stored.has(s.text)) problems.push(`${id}: acknowledged ${s.text} is missing`);
      }
    }
    expect(problems).toEqual([]);

    // Past the lease, a lock a killed replica held is gone: every conversation a kill may have
    // left locked (one with a request that was cut) and the last of every client take a message.
    await sleep(LEASE_SECONDS * 1000 + 500);
    const suspects = [
      ...new Set([
        ...sent.filter((s) => !acknowledged(s)).map((s) => s.sender),
        ...conversations.slice(-CLIENTS),
      ]),
    ];
    // As many at a time as the load had clients (all at once would only queue behind each other).
    const fresh: Sent[] = [];
    for (let i = 0; i < suspects.length; i += CLIENTS) {
      fresh.push(
        ...(await Promise.all(
          suspects.slice(i, i + CLIENTS).map((id) => post(proxy.url, id, message('fresh'), 15_000)),
        )),
      );
    }
    expect(fresh.filter((s) => !acknowledged(s)).map((s) => [s.status, s.failure])).toEqual([]);
    for (const id of suspects) {
      const { texts, problems: found } = await storedTurns(db, id);
      expect(found).toEqual([]);
      expect(texts[texts.length - 1]).toBe(message('fresh'));
    }

    // Last, so that the data checks above report on a slow machine too.
    expect(slow).toEqual([]);
  });
});
