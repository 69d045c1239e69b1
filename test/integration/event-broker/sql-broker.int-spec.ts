import { Client } from 'pg';
import { encodeWireEvent } from 'src/core';
import { eventBrokerOf, type SqlBrokerConfig } from 'src/modules/engine';
import { createBroker, OutboxRelay, sameDatabase, SqlBroker } from 'src/modules/event-broker';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { uniqueName } from 'test/utils/rabbitmq';
import { DataSource } from 'typeorm';

const quiet = { info: () => undefined, warn: () => undefined };

/** `event_broker: type: sql` on a database of its own on the test server. */
describe('event outbox relayed to an SQL events table', () => {
  const trackerUrl = process.env.DATABASE_URL ?? '';
  const dbName = `parley_events_${Date.now().toString(36)}`;
  let admin: Client;
  let ds: DataSource;

  beforeAll(async () => {
    admin = new Client({ connectionString: trackerUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    ds = await new DataSource(buildTypeOrmOptions(trackerUrl, 4)).initialize();
  });
  afterAll(async () => {
    await ds.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });

  function sqlConfig(db: string): SqlBrokerConfig {
    const u = new URL(trackerUrl);
    return eventBrokerOf('endpoints.yml', {
      type: 'sql',
      dialect: 'postgresql',
      url: u.hostname,
      port: u.port || 5432,
      db,
      username: decodeURIComponent(u.username),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    }) as SqlBrokerConfig;
  }

  it("writes Rasa's events(id, sender_id, data) rows, in seq order", async () => {
    const outbox = new EventOutbox(ds);
    outbox.enable();
    const store = new PostgresTrackerStore(ds, outbox);
    const broker = createBroker(sqlConfig(dbName), trackerUrl);
    expect(broker).toBeInstanceOf(SqlBroker);
    const relay = new OutboxRelay(outbox, broker, quiet, {
      batchTurns: 50,
      pollMs: 100,
      initialBackoffMs: 50,
      maxBackoffMs: 400,
      coalesceMs: 0,
    });
    relay.start();
    const id = uniqueName('sql');
    try {
      const v = await store.appendIfUnchanged(
        id,
        [
          { event: 'user', timestamp: 1.5, text: 'hi', metadata: {} },
          { event: 'bot', timestamp: 2.5, text: 'hello', metadata: {} },
        ].map(encodeWireEvent),
        null,
      );
      expect(v).not.toBeNull();
      expect(await relay.flush(20_000)).toBe(true);
    } finally {
      await relay.stop();
      await broker.close();
    }
    const events = new Client({ connectionString: sqlConfig(dbName).url });
    await events.connect();
    try {
      const { rows } = await events.query<{ sender_id: string; data: string }>(
        'SELECT sender_id, data FROM events WHERE sender_id = $1 ORDER BY id',
        [id],
      );
      expect(rows.map((r) => r.sender_id)).toEqual([id, id]);
      expect(rows.map((r) => JSON.parse(r.data) as Record<string, unknown>)).toEqual([
        expect.objectContaining({
          sender_id: id,
          event: 'user',
          text: 'hi',
          metadata: expect.objectContaining({ seq: 1 }),
        }),
        expect.objectContaining({
          sender_id: id,
          event: 'bot',
          text: 'hello',
          metadata: expect.objectContaining({ seq: 2 }),
        }),
      ]);
    } finally {
      await events.end();
    }
  });

  it("refuses Parley's own tracker database, however the URL spells the host", () => {
    const db = new URL(trackerUrl).pathname.slice(1);
    expect(() => createBroker(sqlConfig(db), trackerUrl)).toThrow("Parley's own tracker database");
    expect(sameDatabase('postgres://a@localhost:5432/x', 'postgres://b@127.0.0.1/x')).toBe(true);
    expect(sameDatabase('postgres://localhost:5432/x', 'postgres://localhost:5432/y')).toBe(false);
    expect(sameDatabase('postgres://localhost:5433/x', 'postgres://localhost:5432/x')).toBe(false);
  });
});
