import { type EventEmitter } from 'node:events';
import { encodeWireEvent, type SerializedEvent, type StoreVersion } from 'src/core';
import { type PikaBrokerConfig } from 'src/modules/engine';
import {
  OutboxRelay,
  PikaBroker,
  type BrokerMessage,
  type PublishHeaders,
} from 'src/modules/event-broker';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { metricsRegistry } from 'src/platform/metrics/registry';
import { startPgProxy, type PgProxy } from 'test/utils/pg-proxy';
import {
  AMQP_URL,
  consumeQueue,
  rabbitReachable,
  seqsByConversation,
  uniqueName,
  type QueueConsumer,
} from 'test/utils/rabbitmq';
import { DataSource } from 'typeorm';

const quiet = { info: () => undefined, warn: () => undefined };
const fast = {
  batchTurns: 50,
  pollMs: 100,
  initialBackoffMs: 50,
  maxBackoffMs: 400,
  coalesceMs: 0,
};

function pikaConfig(url: string, exchange: string, queue: string): PikaBrokerConfig {
  return {
    type: 'pika',
    url,
    safeUrl: url,
    exchangeName: exchange,
    queues: [queue],
    connectionAttempts: 1,
    retryDelaySeconds: 0,
    raiseOnFailure: false,
    pii: { streamPii: true, anonymized: [] },
  };
}

/** A turn of `n` events (user, action, bot, …) at the conversation's version. */
function turn(n: number, t: number): SerializedEvent[] {
  const events: SerializedEvent[] = [
    { event: 'user', timestamp: t, text: `hi ${t}`, metadata: { model_id: 'm1' } },
  ];
  for (let i = 1; i < n; i++) {
    events.push({ event: 'action', timestamp: t + i / 100, name: 'utter_greet', metadata: {} });
  }
  return events;
}

/** Appends `turns` turns to each conversation (batched conditional appends, as the runtime). */
async function converse(
  store: PostgresTrackerStore,
  conversations: string[],
  turns: number,
  perTurn: number,
  pauseMs = 0,
): Promise<void> {
  await Promise.all(
    conversations.map(async (c) => {
      let version: StoreVersion | null = await store.version(c);
      for (let t = 0; t < turns; t++) {
        if (pauseMs > 0 && t > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        version = await store.appendIfUnchanged(
          c,
          turn(perTurn, 1_700_000_000 + t).map(encodeWireEvent),
          version,
        );
        if (version === null) throw new Error(`append of ${c} lost its race`);
      }
    }),
  );
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const json = await metricsRegistry.getMetricsAsJSON();
  const m = json.find((x) => x.name === name);
  const v = m?.values.find((x) =>
    Object.entries(labels).every(([k, l]) => (x.labels as Record<string, string>)[k] === l),
  );
  return Number(v?.value ?? 0);
}

/** How many relay passes published (`parley_outbox_relay_batch_turns`'s count). */
async function batchCount(): Promise<number> {
  const json = await metricsRegistry.getMetricsAsJSON();
  const m = json.find((x) => x.name === 'parley_outbox_relay_batch_turns');
  const v = m?.values.find(
    (x) => (x as { metricName?: string }).metricName === 'parley_outbox_relay_batch_turns_count',
  );
  return Number(v?.value ?? 0);
}

describe('event outbox relayed to RabbitMQ (pika)', () => {
  let ok = false;
  let ds: DataSource;
  let outbox: EventOutbox;
  let store: PostgresTrackerStore;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    ok = await rabbitReachable('event broker relay (pika)');
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 6)).initialize();
    outbox = new EventOutbox(ds);
    outbox.enable();
    store = new PostgresTrackerStore(ds, outbox);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(() => ds.destroy());

  async function setUp(url = AMQP_URL): Promise<{ consumer: QueueConsumer; broker: PikaBroker }> {
    const exchange = uniqueName('parley-x');
    const queue = uniqueName('parley-q');
    const consumer = await consumeQueue(queue, exchange);
    const broker = new PikaBroker(pikaConfig(url, exchange, queue));
    cleanups.push(
      () => consumer.close(),
      () => broker.close(),
    );
    return { consumer, broker };
  }

  it('without a broker configured, appends write no outbox rows', async () => {
    const plain = new PostgresTrackerStore(ds, new EventOutbox(ds));
    const c = uniqueName('no-outbox');
    await plain.appendIfUnchanged(c, turn(3, 1).map(encodeWireEvent), null);
    await plain.append(c, turn(2, 2));
    const rows = await ds.query<unknown[]>(
      'SELECT 1 FROM event_outbox WHERE conversation_id = $1',
      [c],
    );
    expect(rows).toHaveLength(0);
  });

  it('writes one outbox row per turn with its seq range, in the append transaction', async () => {
    const c = uniqueName('rows');
    const v1 = await store.appendIfUnchanged(c, turn(3, 1).map(encodeWireEvent), null);
    await store.appendIfUnchanged(c, turn(2, 2).map(encodeWireEvent), v1);
    await store.append(c, turn(1, 3));
    // a lost race writes neither events nor an outbox row
    expect(await store.appendIfUnchanged(c, turn(4, 4).map(encodeWireEvent), v1)).toBeNull();
    const rows = await ds.query<Array<{ first_seq: number; last_seq: number }>>(
      'SELECT first_seq, last_seq FROM event_outbox WHERE conversation_id = $1 ORDER BY id',
      [c],
    );
    expect(rows).toEqual([
      { first_seq: 1, last_seq: 3 },
      { first_seq: 4, last_seq: 5 },
      { first_seq: 6, last_seq: 6 },
    ]);
    await ds.query('DELETE FROM event_outbox WHERE conversation_id = $1', [c]);
  });

  it('publishes every event once, per conversation in seq order, in the flat shape', async () => {
    if (!ok) return;
    const { consumer, broker } = await setUp();
    process.env.RASA_ENVIRONMENT = 'staging';
    const relay = new OutboxRelay(outbox, broker, quiet, fast);
    cleanups.push(
      () => relay.stop(),
      () => Promise.resolve(delete process.env.RASA_ENVIRONMENT),
    );
    relay.start();
    const conversations = [uniqueName('a'), uniqueName('b'), uniqueName('c')];
    const before = await metric('parley_broker_publish_total', {
      broker: 'pika',
      outcome: 'success',
    });
    await converse(store, conversations, 5, 4);
    expect(await relay.flush(20_000)).toBe(true);
    const mine = consumer.bodies().filter((b) => conversations.includes(b.sender_id as string));
    expect(mine).toHaveLength(3 * 5 * 4);
    const ids = new Set(mine.map((b) => (b.metadata as { event_id: string }).event_id));
    expect(ids.size).toBe(mine.length);
    for (const c of conversations) {
      expect(seqsByConversation(mine).get(c)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    }
    const first = mine.find((b) => b.sender_id === conversations[0]);
    expect(Object.keys(first ?? {})[0]).toBe('sender_id');
    expect(first).toMatchObject({
      event: 'user',
      timestamp: 1_700_000_000,
      text: 'hi 1700000000',
      metadata: { model_id: 'm1', seq: 1 },
    });
    const message = consumer.messages.find(
      (m) => JSON.parse(m.content.toString()).sender_id === conversations[0],
    );
    expect(message?.properties.deliveryMode).toBe(2);
    expect(message?.properties.appId).toBe('staging');
    expect(message?.properties.headers).toMatchObject({
      event_id: (first?.metadata as { event_id: string }).event_id,
      seq: 1,
    });
    expect(
      await metric('parley_broker_publish_total', { broker: 'pika', outcome: 'success' }),
    ).toBeGreaterThanOrEqual(before + 60);
  });

  it('a relay keeping up with a steady stream of turns lets them gather between passes', async () => {
    if (!ok) return;
    const { consumer, broker } = await setUp();
    /** The turns of each pass (one publish per pass). */
    const passes: number[] = [];
    class CountingBroker extends PikaBroker {
      override async publish(messages: readonly BrokerMessage[], headers?: PublishHeaders) {
        passes.push(messages.length / 2);
        return super.publish(messages, headers);
      }
    }
    const counting = new CountingBroker((broker as unknown as { config: PikaBrokerConfig }).config);
    cleanups.push(() => counting.close());
    const coalesceMs = 50;
    const relay = new OutboxRelay(outbox, counting, quiet, {
      ...fast,
      batchTurns: 500,
      coalesceMs,
    });
    cleanups.push(() => relay.stop());
    relay.start();
    const countBefore = await batchCount();

    // Eight conversations, each a turn every few milliseconds for about a second: there is
    // always a turn committed by the time a pass ends.
    const conversations = Array.from({ length: 8 }, () => uniqueName('steady'));
    const began = Date.now();
    await converse(store, conversations, 100, 2, 8);
    const elapsed = Date.now() - began;
    expect(await relay.flush(20_000)).toBe(true);

    const mine = consumer.bodies().filter((b) => conversations.includes(b.sender_id as string));
    expect(mine).toHaveLength(8 * 100 * 2);
    // Every pass that was short of a full batch waited coalesceMs before the next claim: at
    // most one pass per coalesceMs while the turns came, and the flush's last one. Passes
    // back to back would each carry the turns of the few milliseconds the last one took.
    expect(passes.length).toBeLessThanOrEqual(Math.ceil(elapsed / coalesceMs) + 2);
    expect(passes.reduce((a, b) => a + b, 0)).toBe(8 * 100);
    expect((await batchCount()) - countBefore).toBe(passes.length);
  });

  it('large batches wait for the channel to drain without piling up listeners', async () => {
    if (!ok) return;
    const { consumer, broker } = await setUp();
    await broker.connect();
    const channel = (broker as unknown as { channel: EventEmitter }).channel;
    const listeners = (): number[] => [
      channel.listenerCount('close'),
      channel.listenerCount('drain'),
    ];
    const before = listeners();
    // 4 × 5,000 messages: the channel's write buffer (1,024 frames) fills several times in
    // each batch, so publish waits for it to drain, many times on the one channel.
    let total = 0;
    for (let batch = 0; batch < 4; batch++) {
      const messages: BrokerMessage[] = Array.from({ length: 5000 }, (_, i) => ({
        conversationId: 'big',
        seq: batch * 5000 + i + 1,
        eventId: `big-${batch}-${i}`,
        body: JSON.stringify({ sender_id: 'big', event: 'bot', text: `message ${i}` }),
      }));
      await broker.publish(messages);
      total += messages.length;
    }
    await consumer.waitFor(total, 60_000);
    expect(consumer.messages).toHaveLength(total);
    expect((broker as unknown as { channel: EventEmitter }).channel).toBe(channel);
    expect(listeners()).toEqual(before);
  });

  it('broker down: appends go on, the outbox grows, and drains once it is back', async () => {
    if (!ok) return;
    const proxy: PgProxy = await startPgProxy(AMQP_URL);
    cleanups.push(() => proxy.close());
    const { consumer, broker } = await setUp(proxy.url);
    const relay = new OutboxRelay(outbox, broker, quiet, fast);
    cleanups.push(() => relay.stop());
    relay.start();
    const conversations = [uniqueName('down-a'), uniqueName('down-b')];
    await converse(store, conversations, 2, 3);
    expect(await relay.flush(20_000)).toBe(true);

    await proxy.cut();
    await converse(store, conversations, 10, 3); // every append succeeds meanwhile
    expect(await relay.flush(300)).toBe(false);
    const backlog = await outbox.backlog();
    expect(backlog.events).toBeGreaterThanOrEqual(60);
    await relay.refreshBacklog(true);
    expect(await metric('parley_outbox_backlog')).toBeGreaterThanOrEqual(60);
    expect(
      await metric('parley_broker_publish_total', { broker: 'pika', outcome: 'failure' }),
    ).toBeGreaterThan(0);

    await proxy.restore();
    expect(await relay.flush(20_000)).toBe(true);
    await relay.refreshBacklog(true);
    expect(await metric('parley_outbox_backlog')).toBe(0);
    const mine = consumer.bodies().filter((b) => conversations.includes(b.sender_id as string));
    const seqs = seqsByConversation(mine);
    for (const c of conversations) {
      expect(seqs.get(c)).toEqual(Array.from({ length: 36 }, (_, i) => i + 1));
    }
  });

  it('two relays on one outbox: no event twice, each conversation still in seq order', async () => {
    if (!ok) return;
    const { consumer, broker } = await setUp();
    // the second relay publishes to the same exchange through its own connection
    const second = new PikaBroker((broker as unknown as { config: PikaBrokerConfig }).config);
    cleanups.push(() => second.close());
    const otherDs = await new DataSource(
      buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 4),
    ).initialize();
    cleanups.push(() => otherDs.destroy());
    const relays = [
      new OutboxRelay(outbox, broker, quiet, { ...fast, batchTurns: 7 }),
      new OutboxRelay(new EventOutbox(otherDs), second, quiet, { ...fast, batchTurns: 7 }),
    ];
    cleanups.push(() => Promise.all(relays.map((r) => r.stop())));
    for (const r of relays) r.start();
    const conversations = Array.from({ length: 8 }, (_, i) => uniqueName(`two-${i}`));
    await converse(store, conversations, 12, 2);
    await Promise.all(relays.map((r) => r.flush(20_000)));
    await consumer.waitFor(8 * 12 * 2);
    const mine = consumer.bodies().filter((b) => conversations.includes(b.sender_id as string));
    expect(mine).toHaveLength(8 * 12 * 2);
    // arrival order per conversation, duplicates NOT removed
    for (const c of conversations) {
      const seqs = mine
        .filter((b) => b.sender_id === c)
        .map((b) => (b.metadata as { seq: number }).seq);
      expect(seqs).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    }
  });

  it('a relay whose database connection is terminated during the publish fails the batch, not the process', async () => {
    const conversations = [uniqueName('cut-a')];
    await converse(store, conversations, 2, 2);
    const relayed: string[] = [];
    // The relay's connection is idle in its transaction while the broker publishes: cut it
    // there (an operator's pg_terminate_backend, a database restart) and wait for the news.
    const cut = outbox.relay(100, async (events) => {
      relayed.push(...events.map((e) => e.conversationId));
      await ds.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND state = 'idle in transaction'`,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    await expect(cut).rejects.toThrow();
    expect(relayed).toContain(conversations[0]);
    // The rows stayed: the next relay gets the same events.
    const again: string[] = [];
    for (let turns = 1; turns > 0;) {
      ({ turns } = await outbox.relay(100, (events) => {
        again.push(...events.map((e) => e.conversationId));
        return Promise.resolve();
      }));
    }
    expect(again.filter((c) => c === conversations[0]).length).toBe(
      relayed.filter((c) => c === conversations[0]).length,
    );
  });

  it('a relay that dies mid-batch loses nothing: the rows stay until a publish is confirmed', async () => {
    if (!ok) return;
    const { consumer, broker } = await setUp();
    let crashes = 1;
    /** Publishes half of the first batch, then fails as a killed process would. */
    class CrashingBroker extends PikaBroker {
      override async publish(messages: readonly BrokerMessage[], headers?: PublishHeaders) {
        if (crashes-- > 0) {
          await super.publish(messages.slice(0, Math.ceil(messages.length / 2)), headers);
          throw new Error('killed mid-batch');
        }
        return super.publish(messages, headers);
      }
    }
    const crashing = new CrashingBroker((broker as unknown as { config: PikaBrokerConfig }).config);
    cleanups.push(() => crashing.close());
    const conversations = [uniqueName('crash-a'), uniqueName('crash-b')];
    await converse(store, conversations, 3, 3);
    const relay = new OutboxRelay(outbox, crashing, quiet, fast);
    cleanups.push(() => relay.stop());
    relay.start();
    expect(await relay.flush(20_000)).toBe(true);
    const mine = consumer.bodies().filter((b) => conversations.includes(b.sender_id as string));
    const seqs = seqsByConversation(mine);
    for (const c of conversations) {
      expect(seqs.get(c)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    expect(mine.length).toBeGreaterThan(18); // the first half went out twice: at-least-once
  });
});
