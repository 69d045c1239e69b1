import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { echoMessage, trainEchoBot } from 'test/utils/echobot';
import { describeFetchError } from 'test/utils/fetch-error';
import { describeWithRedis, uniqueKeyPrefix, type TestRedis } from 'test/utils/redis';

/**
 * Replicas for the multi-instance proofs (test/e2e/multi-instance.e2e-spec.ts and the fault
 * suite): real `parley run` processes of the echobot (test/fixtures/echobot) on one PostgreSQL
 * and one lock store, with an action server whose `action_echo` answers "echo <the message>",
 * so each bot reply names the message it belongs to.
 */

/**
 * A lock store the replicas share: `env` for each replica, `endpoints` the endpoints.yml lines
 * (given the test Redis when the store needs one; called once per suite).
 */
export interface LockStoreCase {
  readonly name: string;
  readonly env: Record<string, string>;
  readonly endpoints?: (redis: TestRedis) => string;
}

export const POSTGRES_LOCKS: LockStoreCase = {
  name: 'PostgreSQL advisory locks',
  env: { LOCK_STORE: 'postgres' },
};

/** `lock_store: type: concurrent_redis` on the test Redis, with a key prefix of its own. */
export const REDIS_LOCKS: LockStoreCase = {
  name: 'Redis concurrent_redis',
  // The ticket of a killed replica holds its conversation until the lease ends: 10 s rather
  // than Rasa's 60 s, which would outlast the 60 s wait of LOCK_TIMEOUT_MS.
  env: { TICKET_LOCK_LIFETIME: '10' },
  endpoints: (redis) => {
    const url = new URL(redis.url);
    return [
      'lock_store:',
      '  type: concurrent_redis',
      `  host: ${redis.host}`,
      `  port: ${redis.port}`,
      `  db: ${url.pathname.slice(1) || '0'}`,
      ...(url.password !== '' ? [`  password: "${decodeURIComponent(url.password)}"`] : []),
      `  key_prefix: ${uniqueKeyPrefix('scale')}`,
      '',
    ].join('\n');
  },
};

/**
 * `describe` for one lock store: a store on Redis runs on the test Redis (or prints one line
 * and skips when there is none, see describeWithRedis). `lockEndpoints()` gives the store's
 * endpoints.yml lines inside hooks and tests.
 */
export function describeWithLockStore(
  title: string,
  store: LockStoreCase,
  body: (lockEndpoints: () => string) => void,
): void {
  const endpoints = store.endpoints;
  if (endpoints === undefined) {
    describe(title, () => body(() => ''));
    return;
  }
  describeWithRedis(title, (redis) => {
    let lines: string | undefined;
    body(() => (lines ??= endpoints(redis())));
  });
}

/** The echo action server; `delayMs` holds each answer back, `maxConcurrent` counts overlap. */
export interface EchoActions {
  readonly url: string;
  delayMs: number;
  /** Calls of `action_echo` so far (a retried turn calls it again). */
  readonly calls: number;
  /** Most calls in progress at once (reset with `resetConcurrency`). */
  readonly maxConcurrent: number;
  resetConcurrency(): void;
  close(): Promise<void>;
}

export async function startEchoActions(): Promise<EchoActions> {
  let active = 0;
  let calls = 0;
  let maxConcurrent = 0;
  const state = { delayMs: 0 };
  const server: TestActionServer = await startActionServer(
    {
      action_echo: async (call) => {
        calls++;
        maxConcurrent = Math.max(maxConcurrent, ++active);
        try {
          if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
          const latest = call.tracker.latest_message as unknown as { text: string };
          return ran([], [{ text: `echo ${latest.text}` }]);
        } finally {
          active--;
        }
      },
    },
    { record: false },
  );
  return {
    url: server.url,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    get calls() {
      return calls;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    resetConcurrency: () => {
      maxConcurrent = active;
    },
    close: () => server.close(),
  };
}

export interface Replicas {
  readonly instances: CliServer[];
  readonly actions: EchoActions;
  /** A client of the database the replicas share (for SQL on the stored events). */
  readonly db: Pool;
  /** Stops every replica still running, the action server and the client. */
  stop(): Promise<void>;
}

/**
 * Trains the echobot and starts `count` replicas with the lock store's endpoints.yml lines and
 * `env` (after the defaults: silent, one process per replica, pool of 10). Whatever started is
 * stopped again when one replica fails to start.
 */
export async function startReplicas(options: {
  count: number;
  lockEndpoints: string;
  env: Record<string, string>;
}): Promise<Replicas> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-replicas-'));
  const instances: CliServer[] = [];
  let actions: EchoActions | undefined;
  let db: Pool | undefined;
  const stop = async (): Promise<void> => {
    await Promise.all(instances.filter((i) => i.running()).map((i) => i.stop()));
    await db?.end();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const model = await trainEchoBot(dir);
    actions = await startEchoActions();
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n${options.lockEndpoints}`);
    const env = {
      ...process.env,
      LOG_LEVEL: 'silent',
      // One process per replica (no launcher), so SIGKILL hits the server itself.
      PARLEY_NODE_FLAGS: 'none',
      DATABASE_POOL_SIZE: '10',
      ...options.env,
    };
    const args = ['--enable-api', '--model', model, '--endpoints', endpoints];
    // Servers starting at once on a busy 2-core machine: a generous readiness deadline. Each is
    // kept as soon as it is up, so stop() ends it also when another failed to start.
    await Promise.all(
      Array.from({ length: options.count }, async () => {
        instances.push(await startCliServer(args, env, 120_000));
      }),
    );
    db = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
    return { instances, actions, db, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface TrackerEvent {
  event: string;
  name?: string;
  text?: string;
  timestamp?: number;
}

/** One message posted to the REST channel and what came back. */
export interface Sent {
  readonly sender: string;
  readonly text: string;
  readonly status: number;
  readonly replies: Array<{ recipient_id: string; text?: string }>;
  /** The body of a non-200 answer, to tell what failed. */
  readonly failure?: string;
}

/** "/say{…}" needs no NLU; the entity value makes each message text unique. */
export const message = echoMessage;

export async function post(base: string, sender: string, text: string): Promise<Sent> {
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
      ...(res.status === 200 ? {} : { failure: raw.slice(0, 2000) }),
    };
  } catch (error) {
    return { sender, text, status: 0, replies: [], failure: describeFetchError(error) };
  }
}

/** The non-200 answers, as [status, body] pairs (an empty list when all were answered). */
export const failures = (sent: readonly Sent[]): Array<[number, string | undefined]> =>
  sent.filter((s) => s.status !== 200).map((s) => [s.status, s.failure]);

/**
 * The turns of a stored conversation: after the session start, each user event must be followed
 * by its own turn (`action_echo`, the bot's "echo <text>", `action_listen`) before the next user
 * event. Returns the user texts in order; a partial or interleaved turn fails the test.
 */
export function turnsOf(id: string, events: readonly TrackerEvent[]): string[] {
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

/**
 * The stored events of a conversation, read through a replica's tracker route, checked against
 * the database: one row per event, `seq` numbered 1…n without a gap or a duplicate.
 */
export async function storedEvents(db: Pool, base: string, id: string): Promise<TrackerEvent[]> {
  const res = await fetch(
    `${base}/conversations/${encodeURIComponent(id)}/tracker?include_events=ALL`,
  );
  expect(res.status).toBe(200);
  const events = ((await res.json()) as { events: TrackerEvent[] }).events;
  const seqs = await db.query<{ seq: number }>(
    'SELECT seq FROM conversation_event WHERE conversation_id = $1 ORDER BY seq',
    [id],
  );
  expect(seqs.rows.map((r) => r.seq)).toEqual(events.map((_e, i) => i + 1));
  return events;
}

/**
 * `conversations` × `perConversation` messages, all sent at once to `url` (a proxy over the
 * replicas): every one answered 200 with its own turn's reply; every conversation stored with
 * each message once, each followed by its own turn, in `seq` order (contiguous `seq`, and
 * timestamps that never go back: turns stored in the order they ran).
 */
export async function burst(
  db: Pool,
  url: string,
  prefix: string,
  conversations: number,
  perConversation: number,
  /** Most requests open at once (a load balancer's connection limit); all when not given. */
  inFlight = Infinity,
): Promise<void> {
  let open = 0;
  const queued: Array<() => void> = [];
  const limited = async (id: string, text: string): Promise<Sent> => {
    if (open >= inFlight) await new Promise<void>((resolve) => queued.push(resolve));
    open++;
    try {
      return await post(url, id, text);
    } finally {
      open--;
      queued.shift()?.();
    }
  };
  const ids = Array.from({ length: conversations }, (_, c) => `${prefix}-${c}-${uniqueSuffix()}`);
  const sent = await Promise.all(
    // Sent message by message across the conversations, so that whatever a proxy or a server
    // takes first spreads over every conversation rather than queueing behind a few.
    Array.from({ length: perConversation }, (_, m) =>
      ids.map((id, c) => limited(id, message(`${c}-${m}`))),
    ).flat(),
  );
  const wrong = sent.filter(
    (s) =>
      s.status === 200 &&
      JSON.stringify(s.replies) !==
        JSON.stringify([{ recipient_id: s.sender, text: `echo ${s.text}` }]),
  );
  expect(wrong).toEqual([]);
  // The stored data first (what a failed request left is part of the picture), then the answers.
  for (const [c, id] of ids.entries()) {
    const events = await storedEvents(db, url, id);
    const texts = turnsOf(id, events);
    const answered = sent.filter((s) => s.sender === id && s.status === 200).map((s) => s.text);
    // Each stored once; every answered one among them.
    expect({ id, duplicates: texts.length - new Set(texts).size }).toEqual({ id, duplicates: 0 });
    expect({ id, missing: answered.filter((t) => !texts.includes(t)) }).toEqual({
      id,
      missing: [],
    });
    // Turns stored in the order they ran: each user message is later than every event before it.
    const late = events.findIndex(
      (e, i) =>
        e.event === 'user' &&
        events.slice(0, i).some((b) => (b.timestamp ?? 0) > (e.timestamp ?? 0)),
    );
    expect({ id, userEventBeforeEarlierEvents: late }).toEqual({
      id,
      userEventBeforeEarlierEvents: -1,
    });
    if (answered.length === perConversation) {
      expect([...texts].sort()).toEqual(
        Array.from({ length: perConversation }, (_, m) => message(`${c}-${m}`)).sort(),
      );
    }
  }
  expect(failures(sent)).toEqual([]);
}

function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}
