import { connect, type ChannelModel } from 'amqplib';
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

  it('events appended (POST) and replaced (PUT) through the tracker API reach the consumer as Rasa streams them', async () => {
    if (!ok || t === undefined || live === undefined) return;
    const id = uniqueId('broker-edit');
    const mineOf = (): Body[] => live!.bodies().filter((b) => b.sender_id === id) as Body[];
    const waitMine = async (n: number): Promise<Body[]> => {
      for (const deadline = Date.now() + 20_000; mineOf().length < n;) {
        if (Date.now() > deadline) throw new Error(`expected ${n} messages of ${id}`);
        await live!.waitFor(live!.messages.length + 1, 20_000).catch(() => undefined);
      }
      return mineOf();
    };
    const flush = async (): Promise<void> => {
      expect(await t!.app.get(EventBrokerService).flush(20_000)).toBe(true);
    };
    const events = async (): Promise<Array<Record<string, unknown>>> =>
      (await request(t!.url).get(`/conversations/${id}/tracker?include_events=ALL`).expect(200))
        .body.events as Array<Record<string, unknown>>;

    // POST /tracker/events on a new conversation: session start + the posted event
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send({ event: 'slot', name: 'note', value: 'first', timestamp: 1_700_000_000 })
      .expect(200);
    await flush();
    let stored = await events();
    let got = await waitMine(stored.length);
    expect(got.map((b) => [b.event, b.metadata.seq])).toEqual(
      stored.map((e, i) => [e.event, i + 1]),
    );

    // PUT with the stored events plus two: exactly the two, at the next positions
    const more = [
      {
        event: 'user',
        text: 'replaced in',
        timestamp: 1_700_000_001,
        parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
      },
      { event: 'bot', text: 'replaced out', timestamp: 1_700_000_002 },
    ];
    const before = got.length;
    await request(t.url)
      .put(`/conversations/${id}/tracker/events`)
      .send([...stored, ...more])
      .expect(200);
    await flush();
    got = await waitMine(before + 2);
    const added = got.slice(before);
    expect(added.map((b) => [b.event, b.text, b.metadata.seq])).toEqual([
      ['user', 'replaced in', before + 1],
      ['bot', 'replaced out', before + 2],
    ]);
    expect(new Set(got.map((b) => b.metadata.event_id)).size).toBe(got.length);

    // PUT with a shorter list publishes nothing; the next append continues from its end
    const kept = (await events()).slice(0, 1);
    await request(t.url).put(`/conversations/${id}/tracker/events`).send(kept).expect(200);
    await flush();
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send({ event: 'slot', name: 'note', value: 'after', timestamp: 1_700_000_003 })
      .expect(200);
    await flush();
    got = await waitMine(before + 3);
    expect(got.slice(before + 2).map((b) => [b.event, b.value, b.metadata.seq])).toEqual([
      ['slot', 'after', 2],
    ]);
    stored = await events();
    expect(stored.map((e) => e.event)).toEqual([kept[0]?.event, 'slot']);
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
    // The replicas of one database share its outbox: the server with the reachable broker
    // would publish this one's rows too. It has done its part; it stops here.
    await t?.close();
    t = undefined;
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

/**
 * `stream_pii: false` with an `anonymization_queues` destination on the real RabbitMQ: the
 * broker's own queue gets nothing, the anonymisation queue gets every event with the rule list
 * applied (user text, parse_data, entity values, slot values, bot text).
 */
describe('event broker (RabbitMQ): stream_pii false and an anonymisation queue', () => {
  jest.setTimeout(120_000);
  let ok = false;
  let dir: string;
  let t: TrainedBotApp | undefined;
  let anon: QueueConsumer | undefined;
  let amqp: ChannelModel | undefined;
  const exchange = uniqueName('parley-pii-x');
  const plainQueue = uniqueName('parley-pii-plain');
  const anonQueue = uniqueName('parley-pii-anon');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-pii-'));
    ok = await rabbitReachable('event broker PII end-to-end');
    if (!ok) return;
    // The broker's own queue, bound to its exchange by the test: whatever Parley publishes
    // there lands in it.
    amqp = await connect(AMQP_URL);
    const channel = await amqp.createChannel();
    await channel.assertExchange(exchange, 'fanout', { durable: false });
    await channel.assertQueue(plainQueue, { durable: true });
    await channel.bindQueue(plainQueue, exchange, '');
    await channel.close();
    anon = await consumeQueue(anonQueue);
    const file = join(dir, 'endpoints.yml');
    writeFileSync(
      file,
      [
        'event_broker:',
        '  type: pika',
        `  url: ${AMQP_URL}`,
        `  exchange_name: ${exchange}`,
        `  queues: [${plainQueue}]`,
        '  stream_pii: false',
        '  anonymization_queues:',
        `    - name: ${anonQueue}`,
        '      anonymization_rules: masked',
        'anonymization:',
        '  metadata: {language: en, model_name: en_core_web_lg, model_provider: spacy}',
        '  rule_lists:',
        '    - id: masked',
        '      rules:',
        '        - {entity: EMAIL_ADDRESS, substitution: mask}',
        '        - {entity: PHONE_NUMBER, substitution: text, value: "<PHONE>"}',
        '        - {entity: PERSON, substitution: mask}',
        '        - {entity: CREDIT_CARD, substitution: faker}',
        '',
      ].join('\n'),
    );
    t = await startAppWithTrainedBot(MOODBOT, 'parley-pii-bot-', {
      env: { PARLEY_ENDPOINTS: file },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await anon?.close();
    if (amqp !== undefined) {
      const channel = await amqp.createChannel();
      await channel.deleteQueue(plainQueue).catch(() => undefined);
      await amqp.close();
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('only anonymised events are delivered', async () => {
    if (!ok || t === undefined || anon === undefined || amqp === undefined) return;
    const id = uniqueId('pii');
    const secrets = [
      'anna.berg@example.org',
      '+49 170 1234567',
      'Anna Berg',
      '4111 1111 1111 1111',
    ];
    await sayRest(t.url, id, 'hello, write to anna.berg@example.org or call +49 170 1234567');
    const text = 'I am Anna Berg, card 4111 1111 1111 1111';
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send([
        {
          event: 'user',
          text,
          timestamp: 1_700_000_000,
          parse_data: {
            text,
            intent: { name: 'greet', confidence: 1 },
            entities: [{ entity: 'PERSON', start: 5, end: 14, value: 'Anna Berg' }],
          },
        },
        { event: 'slot', name: 'contact', value: 'Anna Berg', timestamp: 1_700_000_001 },
        {
          event: 'bot',
          text: 'Thanks Anna Berg, mail sent to anna.berg@example.org',
          timestamp: 1_700_000_002,
        },
      ])
      .expect(200);
    expect(await t.app.get(EventBrokerService).flush(20_000)).toBe(true);

    const stored = (
      await request(t.url).get(`/conversations/${id}/tracker?include_events=ALL`).expect(200)
    ).body.events as Array<Record<string, unknown>>;
    // the tracker store keeps the originals
    expect(JSON.stringify(stored)).toContain('anna.berg@example.org');
    await anon.waitFor(stored.length);
    const bodies = anon.bodies().filter((b) => b.sender_id === id) as Body[];
    expect(bodies.map((b) => b.metadata.seq)).toEqual(stored.map((_, i) => i + 1));
    const all = JSON.stringify(bodies);
    for (const secret of secrets) expect(all).not.toContain(secret);

    const users = bodies.filter((b) => b.event === 'user');
    expect(users[0]?.text).toBe('hello, write to ********************* or call <PHONE>');
    expect(users[0]?.parse_data).toMatchObject({
      text: 'hello, write to ********************* or call <PHONE>',
    });
    expect(users[1]?.text).toMatch(/^I am \*{9}, card 4000\d{12}$/);
    expect(users[1]?.parse_data).toMatchObject({
      entities: [{ entity: 'PERSON', start: 5, end: 14, value: '*********' }],
    });
    expect(bodies.find((b) => b.event === 'slot' && b.name === 'contact')?.value).toBe('*********');
    expect(bodies.filter((b) => b.event === 'bot').at(-1)?.text).toBe(
      'Thanks *********, mail sent to *********************',
    );
    // every other field as stored (same event ids as the relay gives the originals)
    bodies.forEach((b, i) => {
      expect(b.event).toBe(stored[i]?.event);
      expect(b.timestamp).toBe(stored[i]?.timestamp);
    });

    // nothing reached the broker's own queue: publishes were confirmed, so it would be there
    const channel = await amqp.createChannel();
    const { messageCount } = await channel.checkQueue(plainQueue);
    await channel.close();
    expect(messageCount).toBe(0);
  });
});
