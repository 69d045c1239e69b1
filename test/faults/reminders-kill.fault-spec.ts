import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { freePort } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import {
  acknowledged,
  message,
  post,
  sleep,
  spawnReplica,
  trainEchoModel,
  waitReady,
  type Replica,
} from './fault-replicas';

/**
 * Reminders across three `parley run` replicas on one PostgreSQL (scale-reliability §6 D.10),
 * set the way a Rasa client sets them: `reminder` and `cancel_reminder` events posted to
 * `/conversations/{id}/tracker/events?execute_side_effects=true`. A conversation's reminders
 * are set on one replica and cancelled, re-set or overtaken by a user message on the next.
 *
 * 1. 300 reminders due within 2 s; among them cancelled ones (by name, by intent and entities,
 *    by intent alone), `kill_on_user_msg` ones overtaken by a user message (never fire),
 *    `kill_on_user_msg: false` ones overtaken too (fire), re-set ones (same name: only the last
 *    fires). Once a third of them fired, one replica is killed (SIGKILL) with reminders in
 *    flight; it stays down until every reminder is settled (its claims are taken over when
 *    their lease ends), then starts again, as phase 2 needs three replicas.
 * 2. 60 reminders due after a full restart: set, every replica stopped with SIGTERM before
 *    they are due (they are all still pending in the table, none fired), all started again.
 *
 * Asserted from the stored events (SQL): each reminder that must fire fired exactly once — its
 * `EXTERNAL: say` user event, followed by its own bot turn — the others never; `seq` 1…n;
 * each posted event and user message stored once. Lateness (the user event's timestamp − the
 * due time) is printed, not asserted.
 *
 * The bot is test/fixtures/echobot: the reminder's intent `say` runs `action_echo`, which
 * answers "echo EXTERNAL: say"; each reminder carries a unique entity value that names it.
 */
const REPLICAS = 3;
/** Phase 1: conversations with two reminders each, due within WINDOW_MS. */
const CONVERSATIONS = 150;
const WINDOW_MS = 2_000;
/** Phase 2: conversations with two reminders each, due within 1 s after the restart. */
const RESTART_CONVERSATIONS = 30;
/**
 * Each action call takes this long: a replica has reminders in flight when it is killed. (Each
 * replica fires as many at once as it has lock connections — 5 with a pool of 10 — so this
 * bounds how many a second the three can fire: 150 a second, as many as come due.)
 */
const ACTION_DELAY_MS = 50;
/** REMINDER_LEASE_MS: when a dead replica's claims are claimed again. */
const LEASE_MS = 3_000;
/** Hang guards (not deadlines): a replica start, every reminder settled. */
const START_GIVE_UP_MS = 180_000;
const SETTLE_GIVE_UP_MS = 90_000;
const EXTERNAL_TEXT = 'EXTERNAL: say';

/** What happens to a conversation's two reminders `a` and `b` after they are set. */
type Kind =
  | 'plain' // both fire
  | 'cancel-name' // `a` cancelled by name
  | 'cancel-entities' // `a` cancelled by intent and entities
  | 'cancel-intent' // both cancelled by intent
  | 'user-message' // a user message: `a` (kill_on_user_msg) never fires, `b` (not) does
  | 'replaced'; // `b` set again under its name with other entities: only the new one fires
const KINDS: readonly Kind[] = [
  'plain',
  'plain',
  'plain',
  'plain',
  'plain',
  'cancel-name',
  'cancel-entities',
  'cancel-intent',
  'user-message',
  'replaced',
];

interface Reminder {
  /** The entity value the reminder carries: `<conversation>:<a|b|b2>`. */
  readonly key: string;
  readonly name: string;
  readonly dueAt: number;
  readonly killOnUserMessage: boolean;
  /** Whether it must fire (once) or never. */
  readonly fires: boolean;
}

interface Conversation {
  readonly id: string;
  readonly kind: Kind;
  /** The replica `a` and `b` are set on; what follows goes to the next one. */
  readonly home: number;
  /** `a`, `b`, and for `replaced` the new `b`. */
  readonly reminders: readonly Reminder[];
  /** The REST user message (kind `user-message`). */
  readonly userText: string | null;
}

/** `count` conversations whose reminders are due at random moments of [start, start + windowMs]. */
function plan(prefix: string, count: number, start: number, windowMs: number): Conversation[] {
  const slots = Array.from({ length: count * 2 }, (_, k) => k);
  for (let k = slots.length - 1; k > 0; k--) {
    const j = Math.floor(Math.random() * (k + 1));
    [slots[k], slots[j]] = [slots[j] as number, slots[k] as number];
  }
  const dueAt = (k: number): number =>
    start + Math.round(((slots[k] as number) * windowMs) / (slots.length - 1));
  return Array.from({ length: count }, (_, i) => {
    const id = uniqueId(prefix);
    const kind = KINDS[i % KINDS.length] as Kind;
    const a: Reminder = {
      key: `${id}:a`,
      name: 'a',
      dueAt: dueAt(2 * i),
      // Any user event after a reminder was set kills it — the `EXTERNAL:` one of `b` firing
      // first too, as in Rasa: only the one a user message is to kill has the flag.
      killOnUserMessage: kind === 'user-message',
      fires: kind === 'plain' || kind === 'replaced',
    };
    const b: Reminder = {
      key: `${id}:b`,
      name: 'b',
      dueAt: dueAt(2 * i + 1),
      killOnUserMessage: false,
      fires: kind !== 'cancel-intent' && kind !== 'replaced',
    };
    return {
      id,
      kind,
      home: i % REPLICAS,
      reminders: kind === 'replaced' ? [a, b, { ...b, key: `${id}:b2`, fires: true }] : [a, b],
      userText: kind === 'user-message' ? message(`${id}-hello`) : null,
    };
  });
}

const reminderEvent = (r: Reminder): Record<string, unknown> => ({
  event: 'reminder',
  intent: 'say',
  entities: [{ entity: 'n', value: r.key }],
  date_time: new Date(r.dueAt).toISOString(),
  name: r.name,
  kill_on_user_msg: r.killOnUserMessage,
});

/** What follows the setting, posted to the next replica (null: nothing). */
function followUp(c: Conversation): Record<string, unknown> | 'user-message' | null {
  const [a, , b2] = c.reminders as [Reminder, Reminder, Reminder | undefined];
  switch (c.kind) {
    case 'plain':
      return null;
    case 'cancel-name':
      return { event: 'cancel_reminder', name: 'a' };
    case 'cancel-entities':
      // Keys in another order than when set: entities compare key-order-free.
      return { event: 'cancel_reminder', intent: 'say', entities: [{ value: a.key, entity: 'n' }] };
    case 'cancel-intent':
      return { event: 'cancel_reminder', intent: 'say' };
    case 'replaced':
      return reminderEvent(b2 as Reminder);
    case 'user-message':
      return 'user-message';
  }
}

/** Answers 503 ("retry later") under load: a client tries again, as this one does. */
const RETRIES = 5;

/** POST /conversations/{id}/tracker/events with side effects: the final HTTP status. */
async function appendEvents(
  base: string,
  id: string,
  events: Record<string, unknown>[],
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(
      `${base}/conversations/${encodeURIComponent(id)}/tracker/events?execute_side_effects=true`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(events),
        signal: AbortSignal.timeout(30_000),
      },
    );
    await res.arrayBuffer();
    if (res.status !== 503 || attempt === RETRIES) return res.status;
    await sleep(250);
  }
}

/** A user message to the REST channel: 200 when acknowledged with its own echo. */
async function userMessage(base: string, id: string, text: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const sent = await post(base, id, text);
    if (acknowledged(sent)) return 200;
    if (sent.status !== 503 || attempt === RETRIES) return sent.status;
    await sleep(250);
  }
}

/** Runs `work` over `items`, `width` at a time. */
async function inPool<T>(
  items: readonly T[],
  width: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i] as T, i);
      }
    }),
  );
}

interface EventRow {
  conversation_id: string;
  seq: number;
  type_name: string;
  data: {
    text?: string;
    name?: string;
    timestamp?: number;
    parse_data?: { entities?: Array<{ value?: unknown }> };
  };
}

/** What the stored events of a set of conversations show. */
interface Outcome {
  /** How often each reminder (by key) fired. */
  readonly fired: Map<string, number>;
  /** When each reminder fired first (ms since the epoch, the user event's timestamp). */
  readonly firedAt: Map<string, number>;
  readonly problems: string[];
}

/**
 * Reads the conversations' events (SQL) and checks each: `seq` 1…n without a gap; every user
 * event followed by its own turn (`action_echo`, "echo <text>", `action_listen`); the user
 * message sent, once; the `reminder` events posted, each once. Counts the fired reminders by
 * the entity value of their `EXTERNAL: say` user event.
 */
async function readOutcome(db: Client, conversations: readonly Conversation[]): Promise<Outcome> {
  const { rows } = await db.query<EventRow>(
    `SELECT conversation_id, seq, type_name, data::jsonb AS data FROM conversation_event
     WHERE conversation_id = ANY($1) ORDER BY conversation_id, seq`,
    [conversations.map((c) => c.id)],
  );
  const byId = new Map<string, EventRow[]>();
  for (const r of rows) byId.set(r.conversation_id, [...(byId.get(r.conversation_id) ?? []), r]);
  const fired = new Map<string, number>();
  const firedAt = new Map<string, number>();
  const problems: string[] = [];
  for (const c of conversations) {
    const events = byId.get(c.id) ?? [];
    events.forEach((e, i) => {
      if (e.seq !== i + 1) problems.push(`${c.id}: event ${i + 1} has seq ${e.seq}`);
    });
    const userTexts: string[] = [];
    const reminderNames: string[] = [];
    events.forEach((e, i) => {
      if (e.type_name === 'reminder') reminderNames.push(e.data.name ?? '');
      if (e.type_name !== 'user') return;
      const text = e.data.text ?? '';
      const turn = events
        .slice(i + 1, i + 4)
        .map((t) => `${t.type_name}:${t.type_name === 'bot' ? t.data.text : t.data.name}`)
        .join(' ');
      const want = `action:action_echo bot:echo ${text} action:action_listen`;
      if (turn !== want) problems.push(`${c.id}: "${text}" at seq ${e.seq} followed by ${turn}`);
      if (text !== EXTERNAL_TEXT) {
        userTexts.push(text);
        return;
      }
      const key = String(e.data.parse_data?.entities?.[0]?.value);
      fired.set(key, (fired.get(key) ?? 0) + 1);
      if (!firedAt.has(key)) firedAt.set(key, (e.data.timestamp ?? 0) * 1000);
    });
    const wantTexts = c.userText === null ? [] : [c.userText];
    if (JSON.stringify(userTexts) !== JSON.stringify(wantTexts)) {
      problems.push(`${c.id}: user messages ${JSON.stringify(userTexts)}`);
    }
    const wantNames = c.reminders.map((r) => r.name);
    if (JSON.stringify(reminderNames.sort()) !== JSON.stringify(wantNames.sort())) {
      problems.push(`${c.id}: reminder events ${JSON.stringify(reminderNames)}`);
    }
  }
  return { fired, firedAt, problems };
}

/** Reminders that fired other than once (or at all, when they must not). */
function misfires(conversations: readonly Conversation[], fired: Map<string, number>): string[] {
  const planned = new Set<string>();
  const wrong: string[] = [];
  for (const c of conversations) {
    for (const r of c.reminders) {
      planned.add(r.key);
      const n = fired.get(r.key) ?? 0;
      if (n !== (r.fires ? 1 : 0)) wrong.push(`${r.key} (${c.kind}) fired ${n}×`);
    }
  }
  for (const key of fired.keys()) if (!planned.has(key)) wrong.push(`${key}: never set, fired`);
  return wrong;
}

/** p50 / p95 / max lateness of the fired reminders. */
function lateness(conversations: readonly Conversation[], firedAt: Map<string, number>): string {
  const late = conversations
    .flatMap((c) => c.reminders)
    .filter((r) => firedAt.has(r.key))
    .map((r) => (firedAt.get(r.key) as number) - r.dueAt)
    .sort((x, y) => x - y);
  const at = (q: number): number =>
    Math.round(late[Math.min(late.length - 1, Math.floor(q * late.length))] ?? NaN);
  return `lateness p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${at(1)} ms`;
}

describe('reminders over three replicas: kill -9 mid-window, full restart', () => {
  jest.setTimeout(600_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-reminders-kill-'));
  const replicas: Replica[] = [];
  const ports: number[] = [];
  /** Each replica's arguments: its own endpoints file, so the action server tells them apart. */
  const args: string[][] = [];
  /** The action calls each replica has in flight (its reminders' turns, not yet committed). */
  const inFlight = Array.from({ length: REPLICAS }, () => 0);
  let env: NodeJS.ProcessEnv;
  let actions: TestActionServer;
  let db: Client;

  const start = async (slot: number): Promise<void> => {
    const replica = spawnReplica(ports[slot] as number, args[slot] as string[], env);
    replicas[slot] = replica;
    if ((await waitReady(replica, START_GIVE_UP_MS)) === null) {
      throw new Error(`replica ${slot} did not start:\n${replica.output()}`);
    }
  };
  const base = (slot: number): string => (replicas[slot % REPLICAS] as Replica).base;

  interface ReminderRow {
    conversation_id: string;
    name: string;
    status: string;
    attempts: number;
  }
  const storedReminders = async (cs: readonly Conversation[]): Promise<ReminderRow[]> =>
    (
      await db.query<ReminderRow>(
        'SELECT conversation_id, name, status, attempts FROM reminder WHERE conversation_id = ANY($1)',
        [cs.map((c) => c.id)],
      )
    ).rows;
  const firedCount = async (cs: readonly Conversation[]): Promise<number> =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM conversation_event
         WHERE conversation_id = ANY($1) AND type_name = 'user' AND data::jsonb->>'text' = $2`,
        [cs.map((c) => c.id), EXTERNAL_TEXT],
      )
    ).rows[0]?.n ?? 0;
  /**
   * Waits until no reminder of `cs` is left in the table — each fired, cancelled or skipped —
   * and gives the ones seen claimed a second time (a dead replica's claims, taken over).
   */
  const settled = async (cs: readonly Conversation[]): Promise<Set<string>> => {
    const reclaimed = new Set<string>();
    for (const giveUp = Date.now() + SETTLE_GIVE_UP_MS; ; await sleep(20)) {
      const rows = await storedReminders(cs);
      for (const r of rows) if (r.attempts > 1) reclaimed.add(`${r.conversation_id}:${r.name}`);
      if (rows.length === 0) return reclaimed;
      if (Date.now() > giveUp) {
        throw new Error(`reminders never settled: ${JSON.stringify(rows.slice(0, 10))}`);
      }
    }
  };
  /**
   * The lead to give `appends` appends (16 at a time) before the first reminder is due, from
   * 32 appends timed now: the machine is shared, and a cancel or a user message arriving after
   * its reminder was due would prove nothing.
   */
  const leadFor = async (appends: number, extraMs: number): Promise<number> => {
    const began = Date.now();
    await inPool(
      Array.from({ length: 32 }, () => uniqueId('warm')),
      16,
      async (id, i) => void (await appendEvents(base(i), id, [{ event: 'cancel_reminder' }])),
    );
    return Math.round(Math.max(5_000, 3 * (((Date.now() - began) * appends) / 32) + extraMs));
  };
  /**
   * Sets the reminders of `cs` (both in one post on their home replica), then posts what
   * follows on the next replica; every post answered 200. Throws when that took past the first
   * due time (a precondition, not a speed check). Gives how many reminders are left pending.
   */
  const setUp = async (cs: readonly Conversation[], firstDue: number): Promise<number> => {
    const early = (): void => {
      if (Date.now() >= firstDue) {
        throw new Error('the reminders were set after they were due: the machine is too slow now');
      }
    };
    const failed: string[] = [];
    await inPool(cs, 16, async (c) => {
      const status = await appendEvents(
        base(c.home),
        c.id,
        c.reminders.slice(0, 2).map(reminderEvent),
      );
      if (status !== 200) failed.push(`${c.id}: set → ${status}`);
    });
    expect(failed).toEqual([]);
    early();
    expect((await storedReminders(cs)).length).toBe(cs.length * 2);
    await inPool(cs, 16, async (c) => {
      const next = followUp(c);
      if (next === null) return;
      const on = base(c.home + 1);
      const status =
        next === 'user-message'
          ? await userMessage(on, c.id, c.userText as string)
          : await appendEvents(on, c.id, [next]);
      if (status !== 200) failed.push(`${c.id} (${c.kind}) → ${status}`);
    });
    expect(failed).toEqual([]);
    early();
    // What is left: both of a `plain` and `replaced` (re-set) conversation, `b` of a
    // `cancel-name`, `cancel-entities` and `user-message` one (the user message deleted `a`,
    // kill_on_user_msg, in its own commit), nothing of a `cancel-intent` one.
    const kept: Record<Kind, number> = {
      plain: 2,
      'cancel-name': 1,
      'cancel-entities': 1,
      'cancel-intent': 0,
      'user-message': 1,
      replaced: 2,
    };
    const left = cs.reduce((n, c) => n + kept[c.kind], 0);
    expect((await storedReminders(cs)).length).toBe(left);
    return left;
  };

  beforeAll(async () => {
    const model = await trainEchoModel(dir);
    // test/fixtures/echobot's action, counting each replica's calls in flight by the path its
    // endpoint url names.
    actions = await startActionServer(
      {
        action_echo: async (call, { path }) => {
          const slot = Number(path.split('/').pop());
          inFlight[slot] = (inFlight[slot] ?? 0) + 1;
          await sleep(ACTION_DELAY_MS);
          inFlight[slot] = (inFlight[slot] ?? 0) - 1;
          const latest = call.tracker.latest_message as unknown as { text: string };
          return ran([], [{ text: `echo ${latest.text}` }]);
        },
      },
      { record: false },
    );
    for (let slot = 0; slot < REPLICAS; slot++) {
      const endpoints = join(dir, `endpoints-${slot}.yml`);
      writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}/${slot}"\n`);
      args.push(['--enable-api', '--model', model, '--endpoints', endpoints]);
    }
    env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      // One process per replica (no launcher), so SIGKILL hits the server itself.
      PARLEY_NODE_FLAGS: 'none',
      OIDC_EMBEDDED: 'false',
      DATABASE_POOL_SIZE: '10',
      // PostgreSQL advisory locks: one database is all the replicas share.
      LOCK_STORE: 'postgres',
      REMINDER_LEASE_MS: String(LEASE_MS),
    };
    for (let i = 0; i < REPLICAS; i++) ports.push(await freePort());
    await Promise.all(ports.map((_, slot) => start(slot)));
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    for (const r of replicas) r?.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r?.exited));
    await actions?.close();
    await db?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`fires each of ${CONVERSATIONS * 2} reminders due within ${WINDOW_MS / 1000} s exactly once (never when cancelled or killed by a user message), one replica killed mid-way`, async () => {
    const windowStart = Date.now() + (await leadFor(CONVERSATIONS * 1.5, 1_000));
    const conversations = plan('remind', CONVERSATIONS, windowStart, WINDOW_MS);
    await setUp(conversations, windowStart);

    // Once a third of what must fire fired, kill the victim: it has reminders in flight.
    const mustFire = conversations.flatMap((c) => c.reminders).filter((r) => r.fires).length;
    for (const giveUp = Date.now() + SETTLE_GIVE_UP_MS; ; await sleep(50)) {
      if ((await firedCount(conversations)) >= mustFire / 3) break;
      if (Date.now() > giveUp) throw new Error('a third of the reminders never fired');
    }
    // ... and the victim has reminders in flight: their action calls are running, so their
    // turns are not committed and their claims are held. Killed in the same tick as it is seen.
    const victim = replicas[1] as Replica;
    for (const giveUp = Date.now() + SETTLE_GIVE_UP_MS; ; await sleep(1)) {
      if ((inFlight[1] as number) > 0) break;
      if (Date.now() > giveUp) throw new Error('the victim never had a reminder in flight');
    }
    victim.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    const claimedAtKill = (await storedReminders(conversations)).filter(
      (r) => r.status === 'claimed',
    ).length;
    const firedAtKill = await firedCount(conversations);

    // Down until every reminder is settled: the live replicas take over the victim's claims
    // once their lease ends.
    const reclaimed = await settled(conversations);
    const settledAt = Date.now();

    const { fired, firedAt, problems } = await readOutcome(db, conversations);
    process.stdout.write(
      `reminders kill: ${mustFire} of ${CONVERSATIONS * 2} to fire; killed at ` +
        `+${killedAt - windowStart} ms into the window (${firedAtKill} fired, ${claimedAtKill} ` +
        `claimed just after), ${reclaimed.size} claimed again after the lease; settled at ` +
        `+${settledAt - windowStart} ms; ${lateness(conversations, firedAt)}\n`,
    );
    expect(problems).toEqual([]);
    expect(misfires(conversations, fired)).toEqual([]);
    // The premise: the victim held claims when it died (taken over after their lease).
    expect(reclaimed.size).toBeGreaterThan(0);

    // The victim comes back: phase 2 stops and starts all three.
    await start(1);
  });

  it(`fires ${RESTART_CONVERSATIONS * 2} reminders due after a full restart (SIGTERM to all three, started again) exactly once`, async () => {
    // Three replicas, also when the first test failed before the victim came back.
    await Promise.all(
      replicas.map(async (r, slot) => {
        if (!r.running()) await start(slot);
      }),
    );
    // The stop (graceful, all three at once) must come before the first is due too.
    const due = Date.now() + (await leadFor(RESTART_CONVERSATIONS * 1.5, 8_000));
    const conversations = plan('restart', RESTART_CONVERSATIONS, due, 1_000);
    const left = await setUp(conversations, due);

    for (const r of replicas) r.kill('SIGTERM');
    const exits = await Promise.all(replicas.map((r) => r.exited));
    const stoppedAt = Date.now();
    if (stoppedAt >= due) {
      throw new Error(
        'the replicas stopped after the reminders were due: the machine is too slow now',
      );
    }
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    // Persisted: every one still pending, none fired.
    const pending = await storedReminders(conversations);
    expect(pending.length).toBe(left);
    expect(pending.filter((r) => r.status !== 'pending')).toEqual([]);
    expect(await firedCount(conversations)).toBe(0);

    await Promise.all(ports.map((_, slot) => start(slot)));
    const readyAt = Date.now();
    await settled(conversations);
    const { fired, firedAt, problems } = await readOutcome(db, conversations);
    process.stdout.write(
      `reminders restart: ${pending.length} pending over the restart; stopped ${due - stoppedAt} ms ` +
        `before the first was due, ready again ${readyAt - due} ms after; ${lateness(conversations, firedAt)}\n`,
    );
    expect(problems).toEqual([]);
    expect(misfires(conversations, fired)).toEqual([]);
  });
});
