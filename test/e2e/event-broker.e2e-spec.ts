import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBrokerService } from 'src/modules/event-broker';
import request from 'supertest';
import { MOODBOT, sayRest, startAppWithTrainedBot, type TrainedBotApp } from 'test/utils/bots';
import { cliAsync } from 'test/utils/cli';
import { startTestApp, uniqueId } from 'test/utils/create-test-app';
import {
  AMQP_URL,
  consumeQueue,
  rabbitReachable,
  uniqueName,
  type QueueConsumer,
} from 'test/utils/rabbitmq';

type Body = Record<string, unknown> & { metadata: Record<string, unknown> };

/**
 * `event_broker: type: pika` end to end: a conversation over the REST channel reaches a
 * consumer on the real RabbitMQ (every event once, in seq order, Rasa's flat shape), and
 * `parley export` publishes the stored conversation again with the same event ids.
 */
describe('event broker (RabbitMQ) end to end', () => {
  jest.setTimeout(120_000);
  let ok = false;
  let dir: string;
  let t: TrainedBotApp | undefined;
  let live: QueueConsumer | undefined;
  const exchange = uniqueName('parley-e2e-x');
  const queue = uniqueName('parley-e2e-q');
  const sender = uniqueId('broker');

  const endpoints = (name: string, body: string): string => {
    const file = join(dir, name);
    writeFileSync(file, body);
    return file;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-broker-'));
    ok = await rabbitReachable('event broker end-to-end');
    if (!ok) return;
    live = await consumeQueue(queue, exchange);
    const file = endpoints(
      'endpoints.yml',
      `event_broker:\n  type: pika\n  url: ${AMQP_URL}\n  exchange_name: ${exchange}\n  queues:\n    - ${queue}\n`,
    );
    t = await startAppWithTrainedBot(MOODBOT, 'parley-broker-bot-', {
      env: { PARLEY_ENDPOINTS: file },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await live?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a REST conversation reaches the consumer: every event once, in seq order, flat shape', async () => {
    if (!ok || t === undefined || live === undefined) return;
    for (const text of ['hello', 'I am very sad', 'yes', 'bye']) await sayRest(t.url, sender, text);
    expect(await t.app.get(EventBrokerService).flush(20_000)).toBe(true);
    const tracker = await request(t.url)
      .get(`/conversations/${sender}/tracker?include_events=ALL`)
      .expect(200);
    const stored = tracker.body.events as Array<Record<string, unknown>>;
    expect(stored.length).toBeGreaterThan(8);
    await live.waitFor(stored.length);
    const mine = live.bodies().filter((b) => b.sender_id === sender) as Body[];
    expect(mine.map((b) => b.metadata.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(new Set(mine.map((b) => b.metadata.event_id)).size).toBe(stored.length);
    mine.forEach((body, i) => {
      const event = stored[i] as Record<string, unknown>;
      const { event_id: eventId, seq, ...metadata } = body.metadata;
      expect(typeof eventId).toBe('string');
      expect(seq).toBe(i + 1);
      expect({ ...body, metadata }).toEqual({
        sender_id: sender,
        ...event,
        metadata: event.metadata ?? {},
      });
    });
    const user = mine.find((b) => b.event === 'user');
    expect(user).toMatchObject({ text: 'hello', input_channel: 'rest' });
    expect(typeof user?.timestamp).toBe('number');
    expect(user?.metadata.model_id).toEqual(expect.any(String));
  });

  it('parley export publishes the stored conversation again, with the same event ids', async () => {
    if (!ok || t === undefined || live === undefined) return;
    const exportQueue = uniqueName('parley-export-q');
    const exportExchange = uniqueName('parley-export-x');
    const consumer = await consumeQueue(exportQueue, exportExchange);
    try {
      const file = endpoints(
        'export-endpoints.yml',
        `event_broker:\n  type: pika\n  url: ${AMQP_URL}\n  exchange_name: ${exportExchange}\n  queues: [${exportQueue}]\n`,
      );
      const result = await cliAsync(['export', '--endpoints', file, '--conversation-ids', sender], {
        DATABASE_URL: process.env.DATABASE_URL ?? '',
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const liveBodies = live.bodies().filter((b) => b.sender_id === sender) as Body[];
      expect(result.stdout).toContain(`Published ${liveBodies.length} events of 1 conversations`);
      await consumer.waitFor(liveBodies.length);
      const exported = consumer.bodies() as Body[];
      expect(exported.map((b) => b.metadata.event_id)).toEqual(
        liveBodies.map((b) => b.metadata.event_id),
      );
      const processIds = new Set(
        consumer.messages.map((m) => String(m.properties.headers?.['rasa-export-process-id'])),
      );
      expect(processIds.size).toBe(1);
      expect([...processIds][0]).toMatch(/^[0-9a-f-]{36}$/);

      // a time window after the conversation selects nothing: exit code 1, a clear line
      const none = await cliAsync(
        [
          'export',
          '--endpoints',
          file,
          '--conversation-ids',
          sender,
          '--minimum-timestamp',
          '4102444800',
        ],
        { DATABASE_URL: process.env.DATABASE_URL ?? '' },
      );
      expect(none.status).toBe(1);
      expect(none.stderr).toContain('no events to export');
    } finally {
      await consumer.close();
    }
  });

  it.each([
    ['event_broker:\n  type: file\n  path: events.log\n', 'supported: pika, kafka, sql'],
    ['event_broker:\n  type: kafka\n', "type kafka needs 'url'"],
  ])('a bad event_broker stops start-up with a clear error (%#)', async (yaml, message) => {
    const file = endpoints(`bad-${Math.random().toString(36).slice(2)}.yml`, yaml);
    await expect(
      startTestApp({ env: { PARLEY_ENDPOINTS: file }, withDomain: false }),
    ).rejects.toThrow(message);
  });

  it('broker unreachable: turns go on, /health/ready stays 200 with the broker as a warning', async () => {
    // A port nothing listens on: every publish fails, the outbox keeps the events.
    const file = endpoints(
      'down-endpoints.yml',
      `event_broker:\n  type: pika\n  url: amqp://guest:guest@127.0.0.1:1\n  queues:\n    - ${uniqueName('parley-down-q')}\n`,
    );
    const down = await startAppWithTrainedBot(MOODBOT, 'parley-broker-down-', {
      env: { PARLEY_ENDPOINTS: file },
    });
    try {
      const answer = await sayRest(down.url, uniqueId('broker-down'), 'hello');
      expect(answer.length).toBeGreaterThan(0);
      expect(await down.app.get(EventBrokerService).flush(500)).toBe(false);
      const ready = await request(down.url).get('/health/ready').expect(200);
      expect(ready.body.details.event_broker).toMatchObject({ status: 'up', warning: true });
      expect(ready.body.details.database).toMatchObject({ status: 'up' });
    } finally {
      await down.close();
    }
  });

  it("refuses an sql broker that points at Parley's own tracker database", async () => {
    const db = new URL(process.env.DATABASE_URL ?? '');
    const file = endpoints(
      'sql-endpoints.yml',
      `event_broker:\n  type: sql\n  dialect: postgresql\n  url: ${db.hostname}\n  port: ${db.port || 5432}\n  db: ${db.pathname.slice(1)}\n  username: ${decodeURIComponent(db.username)}\n`,
    );
    await expect(
      startTestApp({ env: { PARLEY_ENDPOINTS: file }, withDomain: false }),
    ).rejects.toThrow("points at Parley's own tracker database");
  });
});
