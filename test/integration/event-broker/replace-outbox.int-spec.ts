import { encodeWireEvent, type SerializedEvent, type StoreVersion } from 'src/core';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { uniqueId } from 'test/utils/create-test-app';
import { DataSource } from 'typeorm';

/**
 * PUT /tracker/events at the store: the outbox row of a replacement is written in the replace's
 * transaction and names the positions the broker does not have yet (Rasa's tracker diff:
 * the new list after as many events as were stored). Checked in SQL on the stored data; the
 * relay is not run here (it would claim rows of the whole shared database) — "published" is
 * what the relay does to a row: delete it.
 */
describe('replace and the event outbox (PostgreSQL)', () => {
  let ds: DataSource;
  let outbox: EventOutbox;
  let store: PostgresTrackerStore;
  let wakeUps = 0;

  beforeAll(async () => {
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 4)).initialize();
    outbox = new EventOutbox(ds);
    outbox.enable();
    outbox.onWritten(() => wakeUps++);
    store = new PostgresTrackerStore(ds, outbox);
  });
  afterAll(() => ds.destroy());

  const user = (text: string, t: number): SerializedEvent => ({
    event: 'user',
    timestamp: t,
    text,
    metadata: {},
  });
  const bot = (text: string, t: number): SerializedEvent => ({
    event: 'bot',
    timestamp: t,
    text,
    metadata: {},
  });

  async function turns(id: string, texts: string[]): Promise<void> {
    let version: StoreVersion | null = await store.version(id);
    for (const [i, text] of texts.entries()) {
      const t = 1_700_000_000 + i;
      version = await store.appendIfUnchanged(
        id,
        [user(text, t), bot(`re ${text}`, t + 0.5)].map(encodeWireEvent),
        version,
      );
      if (version === null) throw new Error('lost race');
    }
  }

  const rows = async (id: string): Promise<Array<[number, number]>> =>
    (
      await ds.query<Array<{ first_seq: number; last_seq: number }>>(
        'SELECT first_seq, last_seq FROM event_outbox WHERE conversation_id = $1 ORDER BY id',
        [id],
      )
    ).map((r) => [r.first_seq, r.last_seq]);

  /** What the relay would publish for the conversation's rows: seq and text of each event. */
  const pending = async (id: string): Promise<Array<[number, string]>> =>
    (
      await ds.query<Array<{ seq: number; text: string }>>(
        `SELECT e.seq, e.data->>'text' AS text FROM event_outbox o
         JOIN conversation_event e ON e.conversation_id = o.conversation_id
           AND e.seq BETWEEN o.first_seq AND o.last_seq
         WHERE o.conversation_id = $1 ORDER BY o.id, e.seq`,
        [id],
      )
    ).map((r) => [r.seq, r.text]);

  const published = (id: string): Promise<unknown> =>
    ds.query('DELETE FROM event_outbox WHERE conversation_id = $1', [id]);

  const stored = async (id: string): Promise<SerializedEvent[]> => (await store.retrieve(id)) ?? [];

  it('after everything was published: the events past the stored count, at their positions', async () => {
    const id = uniqueId('replace-longer');
    await turns(id, ['a', 'b']);
    expect(await rows(id)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await published(id);
    const before = wakeUps;
    const events = [...(await stored(id)), user('c', 1_700_000_010), bot('re c', 1_700_000_011)];
    await store.replace(id, events);
    expect(await rows(id)).toEqual([[5, 6]]);
    expect(await pending(id)).toEqual([
      [5, 'c'],
      [6, 're c'],
    ]);
    expect(wakeUps).toBe(before + 1);
  });

  it('a replacement no longer than what the broker has publishes nothing', async () => {
    const id = uniqueId('replace-shorter');
    await turns(id, ['a', 'b']);
    await published(id);
    const before = wakeUps;
    await store.replace(id, [user('x', 1_700_000_000), bot('y', 1_700_000_001)]);
    expect(await rows(id)).toEqual([]);
    expect((await stored(id)).map((e) => e.text)).toEqual(['x', 'y']);
    expect(wakeUps).toBe(before);
    // the next turn continues from the replacement's end
    await turns(id, ['z']);
    expect(await pending(id)).toEqual([
      [3, 'z'],
      [4, 're z'],
    ]);
  });

  it('turns still waiting in the outbox: their rows go, the replacement is published from their first position', async () => {
    const id = uniqueId('replace-pending');
    await turns(id, ['a']);
    await published(id);
    await turns(id, ['b', 'c']); // seq 3..6 not yet published
    expect(await rows(id)).toEqual([
      [3, 4],
      [5, 6],
    ]);
    const texts = ['a', 're a', 'B', 're B', 'C'];
    await store.replace(
      id,
      texts.map((t, i) => (i % 2 === 0 ? user(t, 1_700_000_000 + i) : bot(t, 1_700_000_000 + i))),
    );
    expect(await rows(id)).toEqual([[3, 5]]);
    expect(await pending(id)).toEqual([
      [3, 'B'],
      [4, 're B'],
      [5, 'C'],
    ]);
  });

  it('a new conversation: every event; without a broker no row at all', async () => {
    const id = uniqueId('replace-new');
    await store.replace(id, [user('hi', 1_700_000_000)]);
    expect(await rows(id)).toEqual([[1, 1]]);

    const plain = new PostgresTrackerStore(ds, new EventOutbox(ds));
    const other = uniqueId('replace-plain');
    await plain.replace(other, [user('hi', 1_700_000_000), bot('ho', 1_700_000_001)]);
    expect(await rows(other)).toEqual([]);
    expect((await stored(other)).length).toBe(2);
  });

  it('a failed replacement leaves the old events and their outbox rows (one transaction)', async () => {
    const id = uniqueId('replace-fails');
    await turns(id, ['a']);
    // PostgreSQL text cannot hold NUL: the insert fails after the delete, everything rolls back
    const broken: SerializedEvent[] = [
      { ...user('x', 1_700_000_000), parse_data: { intent: { name: 'a\u0000b' } } },
    ];
    await expect(store.replace(id, broken)).rejects.toThrow();
    expect((await stored(id)).map((e) => e.text)).toEqual(['a', 're a']);
    expect(await rows(id)).toEqual([[1, 2]]);
  });
});
