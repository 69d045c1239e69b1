import { Kafka, logLevel } from 'kafkajs';
import { encodeWireEvent, type SerializedEvent, type StoreVersion } from 'src/core';
import { eventBrokerOf, type KafkaBrokerConfig } from 'src/modules/engine';
import { createBroker, KafkaBroker, OutboxRelay, toBrokerMessage } from 'src/modules/event-broker';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { startFakeKafka, type FakeKafka, type KafkaRecord } from 'test/utils/fake-kafka';
import { seqsByConversation, uniqueName } from 'test/utils/rabbitmq';
import { DataSource } from 'typeorm';

const quiet = { info: () => undefined, warn: () => undefined };
const fast = {
  batchTurns: 50,
  pollMs: 100,
  initialBackoffMs: 50,
  maxBackoffMs: 400,
  coalesceMs: 0,
};
const REAL_KAFKA = process.env.KAFKA_URL;

function kafkaConfig(url: string, extra: Record<string, unknown> = {}): KafkaBrokerConfig {
  return eventBrokerOf('endpoints.yml', {
    type: 'kafka',
    url,
    topic: uniqueName('parley-topic'),
    ...extra,
  }) as KafkaBrokerConfig;
}

async function converse(store: PostgresTrackerStore, ids: string[], turns: number): Promise<void> {
  await Promise.all(
    ids.map(async (c) => {
      let version: StoreVersion | null = await store.version(c);
      for (let t = 0; t < turns; t++) {
        const events: SerializedEvent[] = [
          { event: 'user', timestamp: 1_700_000_000 + t, text: `m${t}`, metadata: {} },
          { event: 'bot', timestamp: 1_700_000_000 + t + 0.5, text: `r${t}`, metadata: {} },
        ];
        version = await store.appendIfUnchanged(c, events.map(encodeWireEvent), version);
        if (version === null) throw new Error('lost race');
      }
    }),
  );
}

/** The records of `topic`: from the fake, or read back from the real Kafka of KAFKA_URL. */
async function recordsOf(fake: FakeKafka | null, topic: string, n: number): Promise<KafkaRecord[]> {
  if (fake !== null) {
    await fake.waitFor(n);
    return fake.records.filter((r) => r.topic === topic);
  }
  const kafka = new Kafka({ brokers: [REAL_KAFKA ?? ''], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: uniqueName('parley-test') });
  const out: KafkaRecord[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`got ${out.length} of ${n} records`)), 30_000);
    void consumer.run({
      eachMessage: ({ partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
        out.push({
          topic,
          partition,
          key: message.key?.toString() ?? null,
          value: message.value?.toString() ?? '',
          headers,
          acks: -1,
        });
        if (out.length >= n) {
          clearTimeout(timer);
          resolve();
        }
        return Promise.resolve();
      },
    });
  });
  await consumer.disconnect();
  return out;
}

describe(`event outbox relayed to Kafka (${REAL_KAFKA ? 'KAFKA_URL' : 'contract fake'})`, () => {
  let ds: DataSource;
  let outbox: EventOutbox;
  let store: PostgresTrackerStore;
  let fake: FakeKafka | null = null;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 6)).initialize();
    outbox = new EventOutbox(ds);
    outbox.enable();
    store = new PostgresTrackerStore(ds, outbox);
    if (!REAL_KAFKA) fake = await startFakeKafka();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await fake?.stop();
    await ds.destroy();
  });

  const url = (): string => REAL_KAFKA ?? fake?.address ?? '';

  it('publishes each event to the topic: key = sender id, RASA_ENVIRONMENT header, flat JSON, seq order', async () => {
    const config = kafkaConfig(url());
    const broker = new KafkaBroker(config);
    const relay = new OutboxRelay(outbox, broker, quiet, fast);
    cleanups.push(
      () => broker.close(),
      () => relay.stop(),
    );
    relay.start();
    const ids = [uniqueName('k-a'), uniqueName('k-b'), uniqueName('k-c')];
    await converse(store, ids, 4);
    expect(await relay.flush(20_000)).toBe(true);
    const records = await recordsOf(fake, config.topic, 24);
    const mine = records.filter((r) => ids.includes(r.key ?? ''));
    expect(mine).toHaveLength(24);
    const bodies = mine.map((r) => JSON.parse(r.value) as Record<string, unknown>);
    for (const c of ids) {
      expect(seqsByConversation(bodies).get(c)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // one conversation, one partition: its order holds for any consumer
      expect(new Set(mine.filter((r) => r.key === c).map((r) => r.partition)).size).toBe(1);
    }
    for (const r of mine) {
      const body = JSON.parse(r.value) as { sender_id: string; metadata: Record<string, unknown> };
      expect(r.key).toBe(body.sender_id);
      expect(r.headers).toEqual({
        RASA_ENVIRONMENT: 'RASA_ENVIRONMENT_NOT_SET',
        event_id: body.metadata.event_id,
        seq: String(body.metadata.seq),
      });
      if (fake !== null) expect(r.acks).toBe(-1);
    }
    expect(bodies[0]).toMatchObject({ sender_id: expect.any(String), event: 'user', text: 'm0' });
  });

  it('partition_by_sender: false sends no key; RASA_ENVIRONMENT carries the environment', async () => {
    const config = kafkaConfig(url(), { partition_by_sender: false });
    const broker = new KafkaBroker(config);
    const relay = new OutboxRelay(outbox, broker, quiet, fast);
    process.env.RASA_ENVIRONMENT = 'production';
    cleanups.push(
      () => broker.close(),
      () => relay.stop(),
      () => Promise.resolve(delete process.env.RASA_ENVIRONMENT),
    );
    relay.start();
    const id = uniqueName('k-nokey');
    await converse(store, [id], 1);
    expect(await relay.flush(20_000)).toBe(true);
    const records = (await recordsOf(fake, config.topic, 2)).filter(
      (r) => (JSON.parse(r.value) as { sender_id: string }).sender_id === id,
    );
    expect(records.map((r) => [r.key, r.headers.RASA_ENVIRONMENT])).toEqual([
      [null, 'production'],
      [null, 'production'],
    ]);
  });

  (REAL_KAFKA ? it.skip : it)(
    'broker refusing connections: appends go on, then the backlog drains in order',
    async () => {
      const f = fake as FakeKafka;
      const config = kafkaConfig(url());
      const broker = new KafkaBroker(config);
      const relay = new OutboxRelay(outbox, broker, quiet, fast);
      cleanups.push(
        () => broker.close(),
        () => relay.stop(),
      );
      relay.start();
      const ids = [uniqueName('k-down-a'), uniqueName('k-down-b')];
      await f.stop();
      try {
        await converse(store, ids, 5);
        expect(await relay.flush(300)).toBe(false);
        expect((await outbox.backlog()).events).toBeGreaterThanOrEqual(20);
      } finally {
        await f.start();
      }
      expect(await relay.flush(30_000)).toBe(true);
      const bodies = f.records
        .filter((r) => r.topic === config.topic)
        .map((r) => JSON.parse(r.value) as Record<string, unknown>);
      for (const c of ids) {
        expect(seqsByConversation(bodies).get(c)).toEqual(
          Array.from({ length: 10 }, (_, i) => i + 1),
        );
      }
    },
  );

  it('stream_pii false + anonymization_topics: originals stay off the topic, the anonymised topic gets masked copies', async () => {
    const anonTopic = uniqueName('parley-anon');
    const config = eventBrokerOf(
      'endpoints.yml',
      {
        type: 'kafka',
        url: url(),
        topic: uniqueName('parley-topic'),
        stream_pii: false,
        anonymization_topics: [{ name: anonTopic, anonymization_rules: 'r' }],
      },
      { rule_lists: [{ id: 'r', rules: [{ entity: 'EMAIL_ADDRESS', substitution: 'mask' }] }] },
    ) as KafkaBrokerConfig;
    const broker = createBroker(config, process.env.DATABASE_URL ?? '');
    cleanups.push(() => broker.close());
    const sender = uniqueName('k-pii');
    const events = [
      { event: 'user', timestamp: 1, text: 'mail a.b@example.org', metadata: {} },
      { event: 'slot', timestamp: 2, name: 'email', value: 'a.b@example.org', metadata: {} },
    ];
    const before = fake?.records.length ?? 0;
    await broker.publish(
      events.map((e, i) =>
        toBrokerMessage({
          conversationId: sender,
          generation: 'g',
          seq: i + 1,
          data: JSON.stringify(e),
        }),
      ),
    );
    const records = (await recordsOf(fake, anonTopic, before + 2)).filter((r) => r.key === sender);
    expect(records.map((r) => JSON.parse(r.value) as Record<string, unknown>)).toMatchObject([
      { sender_id: sender, event: 'user', text: 'mail ***************', metadata: { seq: 1 } },
      { sender_id: sender, event: 'slot', value: '***************', metadata: { seq: 2 } },
    ]);
    if (fake !== null) {
      expect(fake.records.filter((r) => r.topic === config.topic)).toEqual([]);
      expect(JSON.stringify(fake.records.slice(before))).not.toContain('a.b@example.org');
    }
  });
});
