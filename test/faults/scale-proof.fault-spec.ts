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
    const model = await trainEchoBot(dir);
    actions = await startEchoActionServer();
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
    const args = ['--enable-api', '--model', model, '--endpoints', endpoints];
    const start = (port?: number): Promise<CliServer> => startCliServer(args, env, 120_000, port);
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
    const senders = Array.from({ length: CONVERSATIONS }, (_, c) => uniqueName(`proof-${c}`));
    const sent: Sent[] = (
      await Promise.all(
        senders.map(async (sender, c) => {
          const mine: Sent[] = [];
          for (let m = 0; m < MESSAGES; m++) {
            const s = await postMessage(lb.url, sender, echoMessage(`${c}-${m}`));
            if (s.status === 200) {
              // The answer is the reply of this message's own turn.
              expect(s.replies).toEqual([{ recipient_id: sender, text: `echo ${s.text}` }]);
              onAcknowledged();
            }
            mine.push(s);
          }
          return mine;
        }),
      )
    ).flat();
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
    // The faults cost only the requests they hit (those in flight at the kill, those whose
    // database connection was terminated): most messages were acknowledged, and every other
    // answer is a 503 failure body or no answer (the killed replica's requests).
    const failures = new Map<number, number>();
    for (const s of sent) {
      if (s.status !== 200) failures.set(s.status, (failures.get(s.status) ?? 0) + 1);
    }
    const reasons = new Map<string, number>();
    for (const s of sent.filter((x) => x.status !== 200)) {
      const code = /"code":"([^"]+)"/.exec(s.failure ?? '')?.[1] ?? s.failure ?? '';
      reasons.set(code, (reasons.get(code) ?? 0) + 1);
    }
    process.stdout.write(
      `scale-out proof: ${acknowledged} of ${TOTAL} messages acknowledged; not: ${JSON.stringify(Object.fromEntries(failures))} ${JSON.stringify(Object.fromEntries(reasons))}\n`,
    );
    expect(acknowledged).toBeGreaterThan(TOTAL / 2);
    expect([...failures.keys()].filter((status) => status !== 503 && status !== 0)).toEqual([]);
    for (const s of sent.filter((x) => x.status === 503)) {
      // Parley's failure body, or the proxy's own answer for a request its replica died with.
      const body = s.failure ?? '';
      expect(
        body === 'no target answered'
          ? body
          : (JSON.parse(body) as { status: string; code: string }).status,
      ).toMatch(/^(no target answered|failure)$/);
    }

    // Stored: every acknowledged message once with exactly one bot turn, an unacknowledged one
    // at most once, in the order each conversation sent them.
    const stored = await storedEvents(db, senders);
    const { events: storedCount } = expectAnsweredStoredOnce(sent, stored);
    // Acknowledged messages are stored in the order they were sent (each was sent once the one
    // before was answered). An unacknowledged one may land later: a request the client gave up
    // on can still commit after the next message.
    for (const sender of senders) {
      const acked = sent.filter((s) => s.sender === sender && s.status === 200).map((s) => s.text);
      const texts = (stored.get(sender) ?? [])
        .filter((e) => e.event === 'user')
        .map((e) => e.text ?? '')
        .filter((t) => acked.includes(t));
      expect({ sender, texts }).toEqual({ sender, texts: acked });
    }

    // Streamed: the outbox drains, then every stored event arrived, exactly once after dedupe.
    await waitUntil(
      async () =>
        (await db!.query<{ n: number }>('SELECT count(*)::int AS n FROM event_outbox')).rows[0]
          ?.n === 0,
      'the outbox drained',
      120_000,
    );
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
    for (const sender of senders) {
      const streamed = firstDeliveries.get(sender) ?? [];
      expect(streamed.map((e) => [e.metadata.seq, e.event])).toEqual(
        (stored.get(sender) ?? []).map((e) => [e.seq, e.event]),
      );
    }
  });
});
