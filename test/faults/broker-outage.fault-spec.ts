import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import {
  expectAnsweredStoredOnce,
  metricValue,
  startEchoActionServer,
  startEchoLoad,
  storedEvents,
  trainEchoBot,
  waitUntil,
  type Sent,
} from 'test/utils/echobot';
import {
  AMQP_URL,
  consumeQueue,
  rabbitReachable,
  seqsByConversation,
  uniqueName,
  type QueueConsumer,
} from 'test/utils/rabbitmq';
import { startTcpProxy, type TcpProxy } from 'test/utils/tcp-proxy';

/**
 * The event broker (RabbitMQ, `event_broker: type: pika`) out of reach under load, on a private
 * path: a freezable TCP proxy between one `parley run` process and the shared RabbitMQ (which is
 * never stopped). The consumer reads a durable queue straight from RabbitMQ.
 *
 * Promised (transactional outbox): turns go on and all succeed, `/health/ready` stays 200 (the
 * broker is only a warning), the backlog drains after recovery (`parley_outbox_backlog` back to
 * 0) and the consumer receives every stored event at least once, exactly once after dedupe by
 * `event_id`, in per-conversation `seq` order — also when the process is killed (SIGKILL) while
 * the relay publishes a batch.
 */

/** Each outage phase (hung broker, then connections cut and refused). */
const OUTAGE_MS = 20_000;
const WORKERS = 6;

describe('event broker (RabbitMQ) outage under load', () => {
  // Two outage phases of 20 s under load, drains and restarts on a shared 2-core machine: a hang
  // guard, not a speed claim.
  jest.setTimeout(300_000);
  let ok = false;
  const dir = mkdtempSync(join(tmpdir(), 'parley-broker-fault-'));
  const exchange = uniqueName('parley-fault-x');
  const queue = uniqueName('parley-fault-q');
  let actions: TestActionServer | undefined;
  let proxy: TcpProxy | undefined;
  let consumer: QueueConsumer | undefined;
  let instance: CliServer | undefined;
  let db: Client;
  let args: string[] = [];
  const env = {
    ...process.env,
    LOG_LEVEL: 'warn',
    // One process (no launcher), so SIGKILL hits the server itself.
    PARLEY_NODE_FLAGS: 'none',
  };

  beforeAll(async () => {
    ok = await rabbitReachable('event broker outage (fault suite)');
    if (!ok) return;
    const amqp = new URL(AMQP_URL);
    consumer = await consumeQueue(queue, exchange);
    proxy = await startTcpProxy(amqp.hostname, Number(amqp.port || '5672'));
    const model = await trainEchoBot(dir);
    actions = await startEchoActionServer();
    amqp.hostname = proxy.host;
    amqp.port = String(proxy.port);
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      [
        'action_endpoint:',
        `  url: "${actions.url}"`,
        'event_broker:',
        '  type: pika',
        `  url: ${amqp.toString()}`,
        `  exchange_name: ${exchange}`,
        '  queues:',
        `    - ${queue}`,
        '',
      ].join('\n'),
    );
    args = ['--enable-api', '--model', model, '--endpoints', endpoints];
    instance = await startCliServer(args, env, 120_000);
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  }, 180_000);

  afterAll(async () => {
    if (instance?.running()) await instance.stop();
    await proxy?.close();
    await consumer?.close();
    await actions?.close();
    await db?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  const server = (): CliServer => {
    if (instance === undefined) throw new Error('no parley run process');
    return instance;
  };

  async function backlog(): Promise<number> {
    const res = await fetch(`${server().base}/metrics`);
    return metricValue(await res.text(), 'parley_outbox_backlog');
  }

  /** Events waiting in the outbox, from SQL (the metric is refreshed about once a second). */
  async function outboxEvents(): Promise<number> {
    const { rows } = await db.query<{ n: string }>(
      'SELECT coalesce(sum(last_seq - first_seq + 1), 0) AS n FROM event_outbox',
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Polls /health/ready every 500 ms until stopped; returns every status seen. */
  function watchReadiness(): { stop(): Promise<number[]> } {
    const seen: number[] = [];
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const res = await fetch(`${server().base}/health/ready`).catch(() => null);
        seen.push(res?.status ?? 0);
        await res?.text();
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    return {
      async stop() {
        stopped = true;
        await loop;
        return seen;
      },
    };
  }

  /**
   * The delivery check: for each conversation, the first arrival of each `event_id` gives its
   * stored events' seqs 1…n in order; every answered message stored once with its turn.
   */
  async function expectDelivered(
    sent: readonly Sent[],
    conversations: readonly string[],
  ): Promise<{ events: number; received: number; distinct: number }> {
    const ids = new Set(conversations);
    const mine = (consumer?.bodies() ?? []).filter((b) => ids.has(b.sender_id as string));
    const firstArrivals = seqsByConversation(mine);
    const stored = await storedEvents(db, conversations);
    const { events } = expectAnsweredStoredOnce(sent, stored);
    for (const [id, list] of stored) {
      expect({ id, seqs: firstArrivals.get(id) ?? [] }).toEqual({
        id,
        seqs: list.map((e) => e.seq),
      });
    }
    const distinct = new Set(mine.map((b) => (b.metadata as { event_id: string }).event_id)).size;
    return { events, received: mine.length, distinct };
  }

  function summary(label: string, sent: readonly Sent[], extra: Record<string, unknown>): void {
    const answered = sent.filter((s) => s.status === 200).length;
    process.stdout.write(
      `${label}: ${answered} turns answered 200, ${sent.length - answered} failed; ${JSON.stringify(extra)}\n`,
    );
  }

  it(`turns all succeed and readiness stays 200 while the broker hangs ${OUTAGE_MS / 1000} s and then refuses connections ${OUTAGE_MS / 1000} s; the backlog drains and the consumer gets every event`, async () => {
    if (!ok || proxy === undefined || consumer === undefined) return;
    const path = proxy;
    const got = consumer;
    const load = startEchoLoad(() => server().base, 'outage', WORKERS);
    const readiness = watchReadiness();
    let sent: Sent[] = [];
    let peak = 0;
    let cut = false;
    const answeredNow = (): number => load.sent.filter((s) => s.status === 200).length;
    /**
     * One outage phase of OUTAGE_MS under load: turns go on, events wait in the outbox, and in
     * the phase's second half (whatever was in flight when it began long settled) not one
     * message reaches the consumer. Returns [messages at the half, at the end].
     */
    const outagePhase = async (): Promise<[number, number]> => {
      const start = Date.now();
      await load.answered(answeredNow() + 50, OUTAGE_MS / 2);
      await waitUntil(
        async () => (await outboxEvents()) > 0,
        'events wait in the outbox',
        OUTAGE_MS / 2,
      );
      await new Promise((r) => setTimeout(r, start + OUTAGE_MS / 2 - Date.now()));
      const half = got.messages.length;
      await new Promise((r) => setTimeout(r, start + OUTAGE_MS - Date.now()));
      return [half, got.messages.length];
    };
    const quiet: Array<[number, number]> = [];
    try {
      // The broker path works before the outage.
      await load.answered(50);
      await consumer.waitFor(1, 30_000);

      // Hung broker: connections stay open, nothing passes either way.
      path.freeze();
      quiet.push(await outagePhase());
      peak = await outboxEvents();
      path.thaw();

      // Connections closed abruptly (sockets destroyed), new ones refused.
      const before = consumer.messages.length;
      await waitUntil(() => got.messages.length > before, 'published after the thaw', 60_000);
      await path.cut();
      cut = true;
      quiet.push(await outagePhase());
      peak = Math.max(peak, await outboxEvents());
      await path.restore();
      cut = false;
      await load.answered(answeredNow() + 50, 60_000);
    } finally {
      sent = await load.stop();
      path.thaw();
      if (cut) await path.restore();
    }
    const statuses = await readiness.stop();

    expect(sent.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
    for (const s of sent) {
      expect(s.replies).toEqual([{ recipient_id: s.sender, text: `echo ${s.text}` }]);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // Both phases were outages: nothing reached the consumer in their second halves.
    expect(quiet.map(([half, end]) => end - half)).toEqual([0, 0]);
    expect(statuses.length).toBeGreaterThan(40);

    // Recovery: the backlog drains (metric and table), every event reaches the consumer.
    await waitUntil(
      async () => (await backlog()) === 0,
      'parley_outbox_backlog back to 0',
      120_000,
      500,
    );
    expect(await outboxEvents()).toBe(0);
    const result = await expectDelivered(sent, load.conversations);
    expect(result.distinct).toBe(result.events);
    summary('broker outage', sent, {
      ...result,
      peakBacklog: peak,
      readinessProbes: statuses.length,
    });
  });

  it('loses nothing when the process is killed (SIGKILL) while the relay publishes a batch', async () => {
    if (!ok || proxy === undefined || consumer === undefined) return;
    const path = proxy;
    const got = consumer;
    // A backlog of several relay batches (500 turns each) built while the broker hangs.
    path.freeze();
    const load = startEchoLoad(() => server().base, 'kill', WORKERS);
    let sent: Sent[];
    try {
      await waitUntil(
        async () => (await outboxEvents()) >= 6_000,
        'a backlog of 6,000 events',
        120_000,
        500,
      );
    } finally {
      sent = await load.stop();
    }
    expect(sent.filter((s) => s.status !== 200).map((s) => [s.status, s.failure])).toEqual([]);
    const before = consumer.messages.length;
    path.thaw();
    await waitUntil(() => got.messages.length > before, 'the relay publishes', 60_000, 5);
    server().kill('SIGKILL');
    await server().exited;
    // Killed mid-relay: turns are still in the outbox.
    const left = await outboxEvents();
    expect(left).toBeGreaterThan(0);

    instance = await startCliServer(args, env, 120_000);
    await waitUntil(
      async () => (await backlog()) === 0,
      'parley_outbox_backlog back to 0',
      120_000,
      500,
    );
    expect(await outboxEvents()).toBe(0);
    const result = await expectDelivered(sent, load.conversations);
    expect(result.distinct).toBe(result.events);
    summary('kill -9 mid-relay', sent, { ...result, leftAtKill: left });
  });
});
