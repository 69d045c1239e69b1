import { join } from 'node:path';
import { type Client } from 'pg';
import { trainModel } from 'src/cli/train.command';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { FIXTURES } from 'test/utils/create-test-app';

/**
 * The echo bot of the multi-process tests (test/fixtures/echobot): every message runs the custom
 * action `action_echo`, which answers "echo <the message>", so each stored bot reply names the
 * user message it belongs to and a stored conversation can be checked turn by turn.
 */

/** Trains the echo bot into `dir/models` and returns the model archive's path. */
export async function trainEchoBot(dir: string): Promise<string> {
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
  return model.path;
}

/**
 * The action server answering `action_echo` (on loopback). `delayMs`: each call waits that long
 * first (a turn that takes time); `record: false` keeps no calls (long runs: each call carries
 * the whole tracker).
 */
export function startEchoActionServer(
  options: { delayMs?: number; record?: boolean } = {},
): Promise<TestActionServer> {
  const delayMs = options.delayMs ?? 0;
  return startActionServer(
    {
      action_echo: async (call) => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        const latest = call.tracker.latest_message as unknown as { text: string };
        return ran([], [{ text: `echo ${latest.text}` }]);
      },
    },
    { record: options.record ?? true },
  );
}

/** "/say{…}" needs no NLU; the entity value makes each message text unique. */
export const echoMessage = (label: string): string => `/say{"n":"${label}"}`;

/** One message posted to the REST channel and what came back. */
export interface Sent {
  readonly sender: string;
  readonly text: string;
  /** The HTTP status, 0 when no answer came (connection refused or reset, client timeout). */
  readonly status: number;
  readonly replies: Array<{ recipient_id: string; text?: string }>;
  /** The raw body of a non-200 answer, or the client error. */
  readonly failure?: string;
  /** The `Retry-After` header of the answer, if any. */
  readonly retryAfter?: string | null;
  /** Milliseconds from sending to the full answer. */
  readonly ms: number;
}

/** Posts one message to `base`'s REST channel; `timeoutMs` bounds the whole exchange. */
export async function postMessage(
  base: string,
  sender: string,
  text: string,
  timeoutMs = 60_000,
): Promise<Sent> {
  const started = Date.now();
  try {
    const res = await fetch(`${base}/webhooks/rest/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sender, message: text }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const raw = await res.text();
    const body = (res.status === 200 ? JSON.parse(raw) : null) as Sent['replies'] | null;
    return {
      sender,
      text,
      status: res.status,
      replies: Array.isArray(body) ? body : [],
      retryAfter: res.headers.get('retry-after'),
      ms: Date.now() - started,
      ...(res.status === 200 ? {} : { failure: raw.slice(0, 2000) }),
    };
  } catch (error) {
    return {
      sender,
      text,
      status: 0,
      replies: [],
      failure: (error as Error).message,
      ms: Date.now() - started,
    };
  }
}

interface StoredEvent {
  seq: number;
  event: string;
  name?: string;
  text?: string;
}

/** The stored events of conversations, from SQL, each in `seq` order (none: an empty list). */
export async function storedEvents(
  db: Client,
  ids: readonly string[],
): Promise<Map<string, StoredEvent[]>> {
  const { rows } = await db.query<{
    conversation_id: string;
    seq: number;
    data: Record<string, unknown>;
  }>(
    `SELECT conversation_id, seq, data FROM conversation_event
     WHERE conversation_id = ANY($1) ORDER BY conversation_id, seq`,
    [ids],
  );
  const out = new Map<string, StoredEvent[]>(ids.map((id) => [id, []]));
  for (const r of rows) {
    out.get(r.conversation_id)?.push({ seq: r.seq, ...(r.data as Omit<StoredEvent, 'seq'>) });
  }
  return out;
}

/**
 * Checks a stored echo-bot conversation: `seq` 1…n without gap, the session start, then each
 * user message followed by its own turn (`action_echo`, "echo <text>", `action_listen`).
 * Returns the user texts in order; anything else fails the test with the conversation's id.
 */
export function echoTurns(id: string, events: readonly StoredEvent[]): string[] {
  expect({ id, seqs: events.map((e) => e.seq) }).toEqual({
    id,
    seqs: events.map((_e, i) => i + 1),
  });
  expect({ id, start: events.slice(0, 3).map((e) => e.name ?? e.event) }).toEqual({
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
 * Checks the stored conversations against what was sent: each answered (200) message stored
 * exactly once with its own turn (`echoTurns`); a message that was not answered 200 (a failure
 * or no answer) stored at most once; nothing stored that was not sent. Returns the number of
 * stored events and of unanswered messages that were stored all the same.
 */
export function expectAnsweredStoredOnce(
  sent: readonly Sent[],
  stored: ReadonlyMap<string, readonly StoredEvent[]>,
): { events: number; unansweredStored: number } {
  const answered = new Map<string, string[]>();
  const unanswered = new Map<string, Set<string>>();
  for (const s of sent) {
    if (s.status === 200) answered.set(s.sender, [...(answered.get(s.sender) ?? []), s.text]);
    else unanswered.set(s.sender, (unanswered.get(s.sender) ?? new Set()).add(s.text));
  }
  let events = 0;
  let unansweredStored = 0;
  for (const [id, list] of stored) {
    events += list.length;
    const texts = list.length === 0 ? [] : echoTurns(id, list);
    const failed = unanswered.get(id) ?? new Set<string>();
    const extra = texts.filter((t) => failed.has(t));
    unansweredStored += extra.length;
    expect({
      id,
      texts: texts.filter((t) => !failed.has(t)).sort(),
      once: new Set(texts).size,
    }).toEqual({
      id,
      texts: [...(answered.get(id) ?? [])].sort(),
      once: texts.length,
    });
  }
  return { events, unansweredStored };
}

/** The value of an unlabelled gauge in a Prometheus text page (NaN when absent). */
export function metricValue(page: string, name: string): number {
  const line = page.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

/** Conversations driven in a loop until stopped: what they sent and how it went. */
export interface EchoLoad {
  readonly sent: Sent[];
  /** The conversation ids used so far. */
  readonly conversations: string[];
  /** Resolves once `n` messages were answered 200 (counting from the start). */
  answered(n: number, timeoutMs?: number): Promise<void>;
  /** Stops after the messages in flight and returns everything sent. */
  stop(): Promise<Sent[]>;
}

/**
 * `workers` loops, each posting one message at a time (awaiting the answer) to the URL `base()`
 * gives, `perConversation` messages per conversation, then a new conversation.
 */
export function startEchoLoad(
  base: () => string,
  prefix: string,
  workers: number,
  perConversation = 4,
  timeoutMs = 60_000,
): EchoLoad {
  const sent: Sent[] = [];
  const conversations: string[] = [];
  let stopped = false;
  let ok = 0;
  const loops = Array.from({ length: workers }, async (_w, w) => {
    for (let c = 0; !stopped; c++) {
      const id = `${prefix}-${w}-${c}-${Math.random().toString(36).slice(2, 8)}`;
      conversations.push(id);
      for (let m = 0; m < perConversation && !stopped; m++) {
        const s = await postMessage(base(), id, echoMessage(`${w}-${c}-${m}`), timeoutMs);
        sent.push(s);
        if (s.status === 200) ok++;
      }
    }
  });
  return {
    sent,
    conversations,
    async answered(n, waitMs = 60_000) {
      const deadline = Date.now() + waitMs;
      while (ok < n) {
        if (Date.now() > deadline) throw new Error(`${ok} of ${n} messages answered`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return sent;
    },
  };
}

/** Polls `check` every `everyMs` until it returns true; throws `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs: number,
  everyMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
