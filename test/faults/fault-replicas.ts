import { spawn } from 'node:child_process';
import { type Client } from 'pg';
import { BIN, ROOT } from 'test/utils/cli';
import { describeFetchError } from 'test/utils/fetch-error';

/**
 * What the fault specs share: the echo bot (test/fixtures/echobot: every message runs the custom
 * action `action_echo`, whose reply names the message), `parley run` replicas on a FIXED port
 * (a replica killed and started again comes back where the load balancer expects it), one
 * message posted and timed, and the stored turns read back with SQL.
 */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The echo bot's pieces (test/utils/echobot.ts), under the names the fault specs use. */
export {
  echoMessage as message,
  startEchoActionServer as startEchoActions,
  trainEchoBot as trainEchoModel,
} from 'test/utils/echobot';

/** One `parley run` process on a fixed port (not waited for: see `waitReady`). */
export interface Replica {
  readonly base: string;
  readonly startedAt: number;
  output(): string;
  running(): boolean;
  kill(signal: NodeJS.Signals): void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnReplica(port: number, args: string[], env: NodeJS.ProcessEnv): Replica {
  const child = spawn(process.execPath, [BIN, 'run', ...args], {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer): void => {
    // The tail is what tells a failure; a long run must not hold every line.
    output = (output + d.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    base: `http://127.0.0.1:${port}`,
    startedAt: Date.now(),
    output: () => output,
    running: () => child.exitCode === null && child.signalCode === null,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited,
  };
}

/** `/health/ready`'s status, or 0 when nothing answered (within `timeoutMs`). */
export async function readiness(base: string, timeoutMs = 2000): Promise<number> {
  try {
    const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/**
 * Polls `/health/ready` every ~100 ms until it answers 200: the time from spawn to ready, or
 * null when the process exited or `giveUpMs` passed first (a hang guard, not the deadline).
 */
export async function waitReady(replica: Replica, giveUpMs: number): Promise<number | null> {
  while (replica.running() && Date.now() - replica.startedAt < giveUpMs) {
    if ((await readiness(replica.base, 1000)) === 200) return Date.now() - replica.startedAt;
    await sleep(100);
  }
  return null;
}

/** One message posted to the REST channel: what came back, and when. */
export interface Sent {
  readonly sender: string;
  readonly text: string;
  readonly status: number;
  readonly replies: Array<{ recipient_id: string; text?: string }>;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The start of a non-200 body, to tell what failed. */
  readonly failure?: string;
}

/**
 * Posts one message. `status` 0: no complete answer (refused, reset, cut mid-body, or no answer
 * within `timeoutMs`) — never taken for an acknowledged message.
 */
export async function post(
  base: string,
  sender: string,
  text: string,
  timeoutMs = 30_000,
): Promise<Sent> {
  const startedAt = Date.now();
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
      startedAt,
      endedAt: Date.now(),
      ...(res.status === 200 ? {} : { failure: raw.slice(0, 300) }),
    };
  } catch (error) {
    return {
      sender,
      text,
      status: 0,
      replies: [],
      startedAt,
      endedAt: Date.now(),
      failure: describeFetchError(error),
    };
  }
}

/** Whether an answer acknowledges its message: 200 with the message's own echo. */
export const acknowledged = (s: Sent): boolean =>
  s.status === 200 &&
  s.replies.length === 1 &&
  s.replies[0]?.recipient_id === s.sender &&
  s.replies[0]?.text === `echo ${s.text}`;

interface Row {
  seq: number;
  type_name: string;
  name: string | null;
  text: string | null;
}

/** What a conversation's stored events show. */
export interface StoredTurns {
  /** The user texts of its complete turns, in `seq` order. */
  readonly texts: string[];
  /** Everything that is not a session start followed by complete turns (empty when sound). */
  readonly problems: string[];
}

/**
 * Reads a conversation's events with SQL and checks them: `seq` 1…n without a gap, the session
 * start (`action_session_start`, `session_started`, `action_listen`), then only complete turns —
 * `user` text, `action_echo`, bot "echo <text>", `action_listen` — one after the other.
 */
export async function storedTurns(db: Client, id: string): Promise<StoredTurns> {
  const { rows } = await db.query<Row>(
    `SELECT seq, type_name, data::jsonb->>'name' AS name, data::jsonb->>'text' AS text
     FROM conversation_event WHERE conversation_id = $1 ORDER BY seq`,
    [id],
  );
  const problems: string[] = [];
  const texts: string[] = [];
  rows.forEach((row, i) => {
    if (row.seq !== i + 1) problems.push(`${id}: event ${i + 1} has seq ${row.seq}`);
  });
  const shape = (r: Row | undefined): string =>
    r === undefined ? 'nothing' : `${r.type_name}:${r.type_name === 'bot' ? r.text : r.name}`;
  const start = rows.slice(0, 3).map(shape).join(' ');
  const expectedStart = 'action:action_session_start session_started:null action:action_listen';
  if (rows.length > 0 && start !== expectedStart) problems.push(`${id}: starts with ${start}`);
  for (let i = 3; i < rows.length; i += 4) {
    const turn = rows.slice(i, i + 4);
    const text = turn[0]?.type_name === 'user' ? (turn[0].text ?? '') : '';
    const want = `user:null action:action_echo bot:echo ${text} action:action_listen`;
    const got = turn.map(shape).join(' ');
    if (text === '' || got !== want) {
      problems.push(`${id}: partial or foreign turn at seq ${i + 1}: ${got}`);
      break;
    }
    texts.push(text);
  }
  return { texts, problems };
}
