import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { trainModel } from 'src/cli/train.command';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { FIXTURES, uniqueId } from 'test/utils/create-test-app';
import { startRoundRobinProxy, type RoundRobinProxy } from 'test/utils/round-robin-proxy';

/**
 * The multi-instance proof: real `parley run` processes on one PostgreSQL behind a round-robin
 * proxy, as replicas run behind a load balancer. Any replica serves any conversation: whatever
 * the interleaving of requests over replicas, each conversation's tracker holds every answered
 * message exactly once, each followed by its own turn, in `seq` order — also when a replica is
 * killed outright mid-load.
 *
 * The bot (test/fixtures/echobot) answers every message through the custom action
 * `action_echo` with "echo <the message>", so each bot reply names the message it belongs to.
 */

/**
 * The lock stores the proof runs with: `env` for each replica, `endpoints` added to its
 * endpoints.yml. Another store is one more line, e.g.
 * `{ name: 'redis', env: {}, endpoints: 'lock_store:\n  type: concurrent_redis\n  host: 127.0.0.1\n' }`.
 */
interface LockStoreCase {
  readonly name: string;
  readonly env: Record<string, string>;
  readonly endpoints?: string;
}
const LOCK_STORES: readonly LockStoreCase[] = [
  { name: 'PostgreSQL advisory locks', env: { LOCK_STORE: 'postgres' } },
];

interface TrackerEvent {
  event: string;
  name?: string;
  text?: string;
}

/** One message posted to the REST channel and what came back. */
interface Sent {
  readonly sender: string;
  readonly text: string;
  readonly status: number;
  readonly replies: Array<{ recipient_id: string; text?: string }>;
  /** The body of a non-200 answer, to tell what failed. */
  readonly failure?: string;
}

const ECHO_DELAY = { ms: 0 };

/** "/say{…}" needs no NLU; the entity value makes each message text unique. */
const message = (label: string): string => `/say{"n":"${label}"}`;

async function post(base: string, sender: string, text: string): Promise<Sent> {
  try {
    const res = await fetch(`${base}/webhooks/rest/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sender, message: text }),
    });
    const raw = await res.text();
    const body = (res.status === 200 ? JSON.parse(raw) : null) as Sent['replies'] | null;
    return {
      sender,
      text,
      status: res.status,
      replies: Array.isArray(body) ? body : [],
      ...(res.status === 200 ? {} : { failure: raw.slice(0, 300) }),
    };
  } catch {
    return { sender, text, status: 0, replies: [] };
  }
}

/**
 * The turns of a stored conversation: after the session start, each user event must be followed
 * by its own turn (`action_echo`, the bot's "echo <text>", `action_listen`) before the next user
 * event. Returns the user texts in order; a partial or interleaved turn fails the test.
 */
function turnsOf(id: string, events: TrackerEvent[]): string[] {
  const names = events.slice(0, 3).map((e) => e.name ?? e.event);
  expect({ id, start: names }).toEqual({
    id,
    start: ['action_session_start', 'session_started', 'action_listen'],
  });
  const texts: string[] = [];
  for (let i = 3; i < events.length; i += 4) {
    const turn = events.slice(i, i + 4);
    const text = turn[0]?.text ?? '';
    expect({ id, turn: turn.map((e) => [e.event, e.name ?? e.text]) }).toEqual({
      id,
      turn: [
        ['user', text],
        ['action', 'action_echo'],
        ['bot', `echo ${text}`],
        ['action', 'action_listen'],
      ],
    });
    texts.push(text);
  }
  return texts;
}

describe.each(LOCK_STORES)('several parley run processes on one database ($name)', (store) => {
  // Starting three servers and ~700 turns on a shared 2-core machine: a hang guard, no timing.
  jest.setTimeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-scale-'));
  let actions: TestActionServer;
  const instances: CliServer[] = [];
  let db: Client;

  beforeAll(async () => {
    const bot = join(FIXTURES, 'echobot');
    const model = await trainModel(
      {
        data: [join(bot, 'data')],
        domain: join(bot, 'domain.yml'),
        config: join(bot, 'config.yml'),
        out: join(dir, 'models'),
        fixedModelName: 'echo',
        force: true,
      },
      () => undefined,
    );
    actions = await startActionServer({
      action_echo: async (call) => {
        if (ECHO_DELAY.ms > 0) await new Promise((r) => setTimeout(r, ECHO_DELAY.ms));
        const latest = call.tracker.latest_message as unknown as { text: string };
        return ran([], [{ text: `echo ${latest.text}` }]);
      },
    });
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n${store.endpoints ?? ''}`);
    const env = {
      ...process.env,
      LOG_LEVEL: 'silent',
      // One process per replica (no launcher), so SIGKILL hits the server itself.
      PARLEY_NODE_FLAGS: 'none',
      DATABASE_POOL_SIZE: '10',
      ...store.env,
    };
    const args = ['--enable-api', '--model', model.path, '--endpoints', endpoints];
    // Three servers starting at once on a busy 2-core machine: a generous readiness deadline.
    // Each kept as soon as it is up, so afterAll stops it also when another failed to start.
    await Promise.all(
      [0, 1, 2].map(async () => {
        instances.push(await startCliServer(args, env, 120_000));
      }),
    );
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(instances.filter((i) => i.running()).map((i) => i.stop()));
    await db?.end();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The stored events of a conversation, read through one replica, with `seq` checked. */
  async function stored(base: string, id: string): Promise<TrackerEvent[]> {
    const res = await fetch(
      `${base}/conversations/${encodeURIComponent(id)}/tracker?include_events=ALL`,
    );
    expect(res.status).toBe(200);
    const events = ((await res.json()) as { events: TrackerEvent[] }).events;
    const seqs = await db.query<{ seq: number }>(
      'SELECT seq FROM conversation_event WHERE conversation_id = $1 ORDER BY seq',
      [id],
    );
    // One row per event, numbered 1…n without a gap or a duplicate.
    expect(seqs.rows.map((r) => r.seq)).toEqual(events.map((_e, i) => i + 1));
    return events;
  }

  /** 50 conversations × 4 messages, all sent at once through the proxy. */
  async function burst(proxy: RoundRobinProxy, prefix: string): Promise<void> {
    const ids = Array.from({ length: 50 }, () => uniqueId(prefix));
    const sent = await Promise.all(
      ids.flatMap((id, c) =>
        Array.from({ length: 4 }, (_, m) => post(proxy.url, id, message(`${c}-${m}`))),
      ),
    );
    expect(sent.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
    for (const s of sent) {
      // Each answer is the reply of its own message's turn.
      expect(s.replies).toEqual([{ recipient_id: s.sender, text: `echo ${s.text}` }]);
    }
    const trackers = await Promise.all(ids.map((id) => stored(proxy.url, id)));
    for (const [c, id] of ids.entries()) {
      const texts = turnsOf(id, trackers[c] ?? []);
      expect(texts.sort()).toEqual(Array.from({ length: 4 }, (_, m) => message(`${c}-${m}`)));
    }
  }

  it.each([2, 3])(
    'serves 50 conversations × 4 concurrent messages over %i replicas: all answered, each stored once with its own turn',
    async (n) => {
      const proxy = await startRoundRobinProxy(instances.slice(0, n).map((i) => i.base));
      try {
        await burst(proxy, `rr${n}`);
        // Every replica took its share.
        expect(proxy.forwarded.every((count) => count > 0)).toBe(true);
      } finally {
        await proxy.close();
      }
    },
  );

  it('runs 20 concurrent messages to one conversation over 2 replicas one turn at a time', async () => {
    const proxy = await startRoundRobinProxy(instances.slice(0, 2).map((i) => i.base));
    ECHO_DELAY.ms = 100;
    try {
      const id = uniqueId('one');
      const texts = Array.from({ length: 20 }, (_, m) => message(`m${m}`));
      const sent = await Promise.all(texts.map((text) => post(proxy.url, id, text)));
      expect(sent.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
      for (const s of sent) {
        expect(s.replies).toEqual([{ recipient_id: id, text: `echo ${s.text}` }]);
      }
      expect(proxy.forwarded).toEqual([10, 10]);
      const events = await stored(proxy.url, id);
      expect(events.filter((e) => e.event === 'user')).toHaveLength(20);
      expect(turnsOf(id, events).sort()).toEqual([...texts].sort());
    } finally {
      ECHO_DELAY.ms = 0;
      await proxy.close();
    }
  });

  it('keeps every answered message and no partial turn when a replica is killed (SIGKILL) mid-load', async () => {
    const [survivor, victim] = instances.slice(1, 3) as [CliServer, CliServer];
    const proxy = await startRoundRobinProxy([survivor.base, victim.base]);
    ECHO_DELAY.ms = 20;
    try {
      const ids = Array.from({ length: 30 }, () => uniqueId('kill'));
      let answered = 0;
      let killed = false;
      const sent = await Promise.all(
        ids.flatMap((id, c) =>
          Array.from({ length: 4 }, async (_, m) => {
            const s = await post(proxy.url, id, message(`${c}-${m}`));
            if (s.status === 200 && ++answered === 30 && !killed) {
              killed = true;
              victim.kill('SIGKILL');
            }
            return s;
          }),
        ),
      );
      expect(killed).toBe(true);
      await victim.exited;
      const acknowledged = sent.filter((s) => s.status === 200);
      // Some requests went to the victim before it died, and most were answered.
      expect(proxy.forwarded[1]).toBeGreaterThan(0);
      expect(acknowledged.length).toBeGreaterThanOrEqual(30);

      const trackers = await Promise.all(ids.map((id) => stored(survivor.base, id)));
      for (const [c, id] of ids.entries()) {
        const texts = turnsOf(id, trackers[c] ?? []);
        // Each stored message once; every acknowledged one among them.
        expect(new Set(texts).size).toBe(texts.length);
        const mine = acknowledged.filter((s) => s.sender === id).map((s) => s.text);
        expect(mine.filter((text) => !texts.includes(text))).toEqual([]);
      }

      // The survivor keeps serving through the proxy (the dead replica refuses connections),
      // also the conversations the victim was working on.
      const after = await Promise.all(ids.map((id) => post(proxy.url, id, message('after'))));
      expect(after.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
      const afterwards = await Promise.all(ids.map((id) => stored(survivor.base, id)));
      for (const [c, id] of ids.entries()) {
        const texts = turnsOf(id, afterwards[c] ?? []);
        expect(texts[texts.length - 1]).toBe(message('after'));
      }
    } finally {
      ECHO_DELAY.ms = 0;
      await proxy.close();
    }
  });
});
