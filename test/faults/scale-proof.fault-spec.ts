import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { trainModel } from 'src/cli/train.command';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { FIXTURES } from 'test/utils/create-test-app';
import {
  AMQP_URL,
  consumeQueue,
  rabbitReachable,
  uniqueName,
  type QueueConsumer,
} from 'test/utils/rabbitmq';
import { startRoundRobinProxy, type RoundRobinProxy } from 'test/utils/round-robin-proxy';

/**
 * The scale-out proof: three `parley run` replicas on one PostgreSQL behind a round-robin
 * proxy, with the RabbitMQ event broker on. 200 conversations × 20 messages, each conversation
 * one message after the other, all conversations at once. Mid-run one replica is killed
 * (SIGKILL) and started again, and later every database connection of the replicas is
 * terminated. Afterwards:
 * - every acknowledged (200) message is stored exactly once, in the order it was sent, followed
 *   by exactly one complete bot turn; a message that was not acknowledged is stored at most
 *   once (its turn may have committed before the failure reached the client);
 * - the events of every conversation reached the RabbitMQ consumer: each stored event at least
 *   once, exactly once after dedupe by `event_id`, first deliveries in `seq` order.
 *
 * The bot (test/fixtures/echobot) answers each message through the custom action `action_echo`
 * with "echo <the message>".
 */

const CONVERSATIONS = 200;
const MESSAGES = 20;
const TOTAL = CONVERSATIONS * MESSAGES;

interface WireEvent {
  sender_id: string;
  event: string;
  text?: string;
  name?: string;
  metadata: { event_id: string; seq: number };
}

interface StoredEvent {
  seq: number;
  type_name: string;
  data: { text?: string; name?: string };
}

/** "/say{…}" needs no NLU; the entity value makes each message text unique. */
const message = (c: number, m: number): string => `/say{"n":"${c}-${m}"}`;

let rabbit = false;
beforeAll(async () => {
  rabbit = await rabbitReachable('scale-out proof');
});

describe('scale-out proof: 3 replicas, 200 conversations × 20 messages, kill -9 and a database purge mid-run', () => {
  jest.setTimeout(600_000);
  const dir = mkdtempSync(join(tmpdir(), 'parley-proof-'));
  let actions: TestActionServer | undefined;
  let consumer: QueueConsumer | undefined;
  let proxy: RoundRobinProxy | undefined;
  const replicas: CliServer[] = [];
  let db: Client | undefined;

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(replicas.filter((r) => r.running()).map((r) => r.stop()));
    await consumer?.close();
    await db?.end();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged message once, in order, with one bot turn, and streams every event once after dedupe', async () => {
    if (!rabbit) return;
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
      action_echo: (call) => {
        const latest = call.tracker.latest_message as unknown as { text: string };
        return Promise.resolve(ran([], [{ text: `echo ${latest.text}` }]));
      },
    });
    const exchange = uniqueName('parley-proof');
    const queue = `${exchange}-events`;
    consumer = await consumeQueue(queue, exchange);
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      [
        'action_endpoint:',
        `  url: "${actions.url}"`,
        'event_broker:',
        '  type: pika',
        `  url: "${AMQP_URL}"`,
        `  exchange_name: ${exchange}`,
        '  queues:',
        `    - ${queue}`,
        '',
      ].join('\n'),
    );
    const env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      // One process per replica (no launcher), so SIGKILL hits the server itself.
      PARLEY_NODE_FLAGS: 'none',
      DATABASE_POOL_SIZE: '10',
      LOCK_STORE: 'postgres',
    };
    const args = ['--enable-api', '--model', model.path, '--endpoints', endpoints];
    const start = (port?: number): Promise<CliServer> =>
      startCliServer(args, env, 120_000, port);
    for (const r of await Promise.all([start(), start(), start()])) replicas.push(r);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();

    // The victim is restarted on its port: the proxy takes it in again once its readiness
    // answers, as a load balancer does with a replaced pod.
    let replacement: CliServer | null = null;
    proxy = await startRoundRobinProxy(replicas.map((r) => r.base));
    const lb = proxy;

    let acknowledged = 0;
    let killedAt = -1;
    let purgedAt = -1;
    let purged = 0;
    const faults: Array<Promise<void>> = [];
    const onAcknowledged = (): void => {
      acknowledged++;
      if (acknowledged === Math.floor(TOTAL / 4)) {
        killedAt = acknowledged;
        const victim = replicas[2] as CliServer;
        victim.kill('SIGKILL');
        faults.push(
          victim.exited.then(async () => {
            replacement = await start(Number(new URL(victim.base).port));
          }),
        );
      }
      if (acknowledged === Math.floor(TOTAL / 2)) {
        purgedAt = acknowledged;
        faults.push(
          (db as Client)
            .query<{ n: number }>(
              `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND pid <> pg_backend_pid()`,
            )
            .then((r) => {
              purged = r.rows[0]?.n ?? 0;
            }),
        );
      }
    };

    /** Each conversation sends its messages one after the other; failures are recorded. */
    const sent = await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        const sender = uniqueName(`proof-${c}`);
        const outcomes: Array<{ text: string; ok: boolean }> = [];
        for (let m = 0; m < MESSAGES; m++) {
          const text = message(c, m);
          const res = await fetch(`${lb.url}/webhooks/rest/webhook`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender, message: text }),
          }).catch(() => null);
          const body = res ? await res.text() : '';
          const ok = res?.status === 200;
          if (ok) {
            // The answer is the reply of this message's own turn.
            expect(JSON.parse(body)).toEqual([{ recipient_id: sender, text: `echo ${text}` }]);
            onAcknowledged();
          }
          outcomes.push({ text, ok });
        }
        return { sender, outcomes };
      }),
    );
    await Promise.all(faults);
    expect(killedAt).toBeGreaterThan(0);
    expect(purgedAt).toBeGreaterThan(0);
    // The purge hit the replicas' pools (not only this test's own connection).
    expect(purged).toBeGreaterThan(0);
    // The replacement replica came up and serves.
    expect(replacement).not.toBeNull();
    const fresh = await fetch(`${(replacement as unknown as CliServer).base}/health/ready`);
    expect(fresh.status).toBe(200);
    replicas.push(replacement as unknown as CliServer);
    // Most messages were acknowledged: the faults cost only the requests they hit.
    expect(acknowledged).toBeGreaterThan(TOTAL * 0.9);

    // Stored: per conversation, the user texts in order, each with exactly one bot turn.
    const storedBySender = new Map<string, StoredEvent[]>();
    const rows = await db.query<StoredEvent & { conversation_id: string }>(
      `SELECT conversation_id, seq, type_name, data FROM conversation_event
       WHERE conversation_id = ANY($1) ORDER BY conversation_id, seq`,
      [sent.map((s) => s.sender)],
    );
    for (const r of rows.rows) {
      const list = storedBySender.get(r.conversation_id) ?? [];
      list.push(r);
      storedBySender.set(r.conversation_id, list);
    }
    for (const { sender, outcomes } of sent) {
      const events = storedBySender.get(sender) ?? [];
      // seq 1…n without a gap or a duplicate
      expect(events.map((e) => e.seq)).toEqual(events.map((_e, i) => i + 1));
      const texts = turnsOf(sender, events);
      // Each stored once, in the order sent (a subsequence of what was sent).
      const order = outcomes.map((o) => o.text);
      expect(new Set(texts).size).toBe(texts.length);
      const positions = texts.map((t) => order.indexOf(t));
      expect(positions.every((p, i) => p >= 0 && (i === 0 || p > (positions[i - 1] ?? -1)))).toBe(
        true,
      );
      // Every acknowledged message is among them.
      const missing = outcomes.filter((o) => o.ok && !texts.includes(o.text)).map((o) => o.text);
      expect({ sender, missing }).toEqual({ sender, missing: [] });
    }

    // Streamed: the outbox drains, then every stored event arrived, exactly once after dedupe.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const left = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox');
      if ((left.rows[0]?.n ?? 0) === 0) break;
      if (Date.now() > deadline) throw new Error('the outbox did not drain within 2 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    const storedCount = rows.rows.length;
    await consumer.waitFor(storedCount, 60_000);
    const firstDeliveries = new Map<string, WireEvent[]>();
    const seen = new Set<string>();
    for (const body of consumer.bodies() as unknown as WireEvent[]) {
      if (seen.has(body.metadata.event_id)) continue;
      seen.add(body.metadata.event_id);
      const list = firstDeliveries.get(body.sender_id) ?? [];
      list.push(body);
      firstDeliveries.set(body.sender_id, list);
    }
    expect(seen.size).toBe(storedCount);
    for (const { sender } of sent) {
      const stored = storedBySender.get(sender) ?? [];
      const streamed = firstDeliveries.get(sender) ?? [];
      expect(streamed.map((e) => [e.metadata.seq, e.event])).toEqual(
        stored.map((e) => [e.seq, e.type_name]),
      );
    }
  });
});

/**
 * The user texts of a stored conversation: after the session start, each user event must be
 * followed by its own turn (`action_echo`, the bot's "echo <text>", `action_listen`) before the
 * next; a partial or interleaved turn fails the test.
 */
function turnsOf(id: string, events: StoredEvent[]): string[] {
  const label = (e: StoredEvent): string => e.data.name ?? e.type_name;
  expect({ id, start: events.slice(0, 3).map(label) }).toEqual({
    id,
    start: ['action_session_start', 'session_started', 'action_listen'],
  });
  const texts: string[] = [];
  for (let i = 3; i < events.length; i += 4) {
    const turn = events.slice(i, i + 4);
    const text = turn[0]?.data.text ?? '';
    expect({ id, turn: turn.map((e) => [e.type_name, e.data.name ?? e.data.text]) }).toEqual({
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
