import {
  encodeWireEvent,
  NO_REMINDER_CHANGES,
  type ReminderRecord,
  type SerializedEvent,
} from 'src/core';
import { EventOutbox, PostgresTrackerStore } from 'src/modules/tracker';
import {
  BATCHED_APPEND,
  batchedAppend,
  batchedAppendParams,
} from 'src/modules/tracker/persistence/batched-append';
import { toEventRows } from 'src/modules/tracker/persistence/conversation-event.mapper';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { DataSource } from 'typeorm';

const ev = (
  event: string,
  timestamp: number,
  extra: Record<string, unknown> = {},
): SerializedEvent => ({
  event,
  timestamp,
  ...extra,
});
const id = (p: string) => `${p}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
/** A wire event encoded as the message loop hands events to the store. */
const enc = (...args: Parameters<typeof ev>) => encodeWireEvent(ev(...args));

describe(PostgresTrackerStore.name, () => {
  let ds: DataSource;
  let store: PostgresTrackerStore;

  beforeAll(async () => {
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 4)).initialize();
    store = new PostgresTrackerStore(ds, new EventOutbox(ds));
  });
  afterAll(() => ds.destroy());

  /** A reminder change of one turn: sets `name` in conversation `c`. */
  const setting = (c: string, name: string) => {
    const r: ReminderRecord = {
      conversationId: c,
      name,
      intent: 'ping',
      entities: [],
      triggerAt: Date.parse('2030-01-01T00:00:00Z'),
      killOnUserMessage: false,
      scheduledAt: 1,
      outputChannel: null,
    };
    return { ...NO_REMINDER_CHANGES, schedule: [r] };
  };
  const count = async (table: string, c: string): Promise<number> =>
    (
      await ds.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = $1`,
        [c],
      )
    )[0]?.n ?? 0;

  it('with the outbox on, writes events, the outbox row and reminders in one statement; a failed reminder write stores none of them', async () => {
    const outbox = new EventOutbox(ds);
    outbox.enable();
    const withOutbox = new PostgresTrackerStore(ds, outbox);
    const [refused, alone, ok] = [id('refused'), id('alone'), id('ok')];
    const fn = `refuse_${Math.random().toString(36).slice(2)}`;
    // Refuses reminders of `refused` only: other specs may use the table meanwhile.
    await ds.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.conversation_id = '${refused}' THEN RAISE EXCEPTION 'reminder refused'; END IF;
        RETURN NEW;
      END $$`);
    await ds.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON reminder
      FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      // Sent at once: the later ones leave in one batch, which fails as a whole and is retried
      // write by write.
      const results = await Promise.allSettled([
        withOutbox.appendIfUnchanged(alone, [enc('pause', 1)], null),
        withOutbox.appendIfUnchanged(refused, [enc('reminder', 1)], null, setting(refused, 'r')),
        withOutbox.appendIfUnchanged(ok, [enc('reminder', 1)], null, setting(ok, 'r')),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((results[1] as PromiseRejectedResult).reason)).toContain('reminder refused');
      expect(await withOutbox.version(refused)).toBeNull();
      for (const table of ['conversation_event', 'event_outbox', 'reminder']) {
        expect({ table, n: await count(table, refused) }).toEqual({ table, n: 0 });
        expect({ table, n: await count(table, ok) }).toEqual({ table, n: 1 });
      }
      expect(await count('reminder', alone)).toBe(0);
    } finally {
      await ds.query(`DROP TRIGGER ${fn} ON reminder`);
      await ds.query(`DROP FUNCTION ${fn}()`);
      await ds.query('DELETE FROM event_outbox WHERE conversation_id = ANY($1::text[])', [
        [refused, alone, ok],
      ]);
      await ds.query('DELETE FROM reminder WHERE conversation_id = ANY($1::text[])', [
        [refused, alone, ok],
      ]);
    }
    // The trigger gone, the same write goes through.
    expect(
      await withOutbox.appendIfUnchanged(
        refused,
        [enc('reminder', 1)],
        null,
        setting(refused, 'r'),
      ),
    ).toMatchObject({ lastSeq: 1 });
    expect([await count('reminder', refused), await count('event_outbox', refused)]).toEqual([
      1, 1,
    ]);
    await ds.query('DELETE FROM event_outbox WHERE conversation_id = $1', [refused]);
    await ds.query('DELETE FROM reminder WHERE conversation_id = $1', [refused]);
  });

  it('deletes a conversation’s events with it, whoever deletes the conversation row', async () => {
    const a = id('gone-a');
    const b = id('gone-b');
    const kept = id('kept');
    for (const c of [a, b, kept]) await store.append(c, [ev('pause', 1), ev('resume', 2)]);
    const stored = async (c: string): Promise<number> =>
      Number(
        (
          await ds.query<Array<{ n: string }>>(
            'SELECT count(*) AS n FROM conversation_event WHERE conversation_id = $1',
            [c],
          )
        )[0]?.n,
      );
    expect(await store.delete(a)).toBe(true);
    // several at once, as GraphQL's deleteConversations does
    await ds.query('DELETE FROM conversation WHERE id = ANY($1::text[])', [[b, id('unknown')]]);
    expect([await stored(a), await stored(b), await stored(kept)]).toEqual([0, 0, 2]);
    // a conversation started again under the same id starts from nothing
    await store.append(a, [ev('restart', 9)]);
    expect(await store.retrieve(a)).toEqual([ev('restart', 9)]);
  });

  it('fills the columns that queries filter on', async () => {
    const c = id('columns');
    await store.append(c, [
      ev('user', 1, { text: 'hi', parse_data: { intent: { name: 'greet', confidence: 1 } } }),
      ev('action', 2, { name: 'utter_greet' }),
    ]);
    const rows = await ds.query<unknown[]>(
      'SELECT seq, type_name, intent_name, action_name FROM conversation_event WHERE conversation_id = $1 ORDER BY seq',
      [c],
    );
    expect(rows).toEqual([
      { seq: 1, type_name: 'user', intent_name: 'greet', action_name: null },
      { seq: 2, type_name: 'action', intent_name: null, action_name: 'utter_greet' },
    ]);
  });

  it('finds the reminders a batch deletes through their key, however many there are', async () => {
    // Every turn with a user message deletes its conversation's kill_on_user_msg reminders: a
    // scan of the whole reminder table per batch would tax every turn.
    const prefix = id('plan-reminders');
    await ds.query(
      `INSERT INTO reminder (conversation_id, name, intent, entities, entities_key, trigger_at,
         kill_on_user_msg, scheduled_at, due_at)
       SELECT $1 || '-' || n, 'r', 'ping', '[]', '[]', now(), true, n, now()
       FROM generate_series(1, 5000) AS n`,
      [prefix],
    );
    await ds.query('ANALYZE reminder');
    try {
      const batch = Array.from({ length: 20 }, (_, i) => ({
        conversationId: `${prefix}-${i + 1}`,
        rows: toEventRows([enc('user', 10), enc('action', 11)]),
        expected: { generation: '00000000-0000-0000-0000-000000000000', lastSeq: 1 },
        traceparent: null,
        reminders: {
          ...NO_REMINDER_CHANGES,
          cancel: [{ name: 'gone' }, { name: null, intent: 'ping', entities: null }],
          killedBefore: 10,
        },
        resolve: () => undefined,
        reject: () => undefined,
      }));
      for (const outbox of [false, true]) {
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          const plan = await ds.transaction(async (m) => {
            await m.query(`SET LOCAL plan_cache_mode = ${mode}`);
            const out = await m.query<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>>(
              `EXPLAIN (FORMAT JSON) ${batchedAppend(outbox, true)}`,
              batchedAppendParams([...batch, { ...batch[0]!, reminders: null }], outbox, true),
            );
            return out[0]!['QUERY PLAN'][0]!.Plan;
          });
          const reads = scansOf(plan)
            .filter((scan) => scan.relation === 'reminder')
            .map((scan) => scan.type);
          expect({ outbox, mode, reads }).toEqual({
            outbox,
            mode,
            reads: [expect.stringMatching(/^(Index|Index Only|Bitmap Heap) Scan$/)],
          });
        }
      }
    } finally {
      await ds.query('DELETE FROM reminder WHERE conversation_id LIKE $1', [`${prefix}-%`]);
    }
  });

  it('finds the conversations a batch moves on through their key, however many there are', async () => {
    // Every turn's append moves its conversation row on. Matched by a hash join, that meant
    // reading the whole conversation table for each batch (measured: half of PostgreSQL's
    // time per turn with a few thousand conversations); it must be an index lookup.
    const prefix = id('plan');
    await ds.query(
      `INSERT INTO conversation (id, started_at, latest_event_time, last_seq)
       SELECT $1 || '-' || n, n, n, 1 FROM generate_series(1, 3000) AS n`,
      [prefix],
    );
    await ds.query('ANALYZE conversation');
    try {
      const rows = await ds.query<Array<{ id: string; generation: string; last_seq: number }>>(
        'SELECT id, generation, last_seq FROM conversation WHERE id LIKE $1 LIMIT 20',
        [`${prefix}-%`],
      );
      const batch = rows.map((r) => ({
        conversationId: r.id,
        rows: toEventRows([enc('pause', 1), enc('resume', 2)]),
        expected: { generation: r.generation, lastSeq: r.last_seq },
        traceparent: null,
        resolve: () => undefined,
        reject: () => undefined,
      }));
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        const plan = await ds.transaction(async (m) => {
          await m.query(`SET LOCAL plan_cache_mode = ${mode}`);
          const out = await m.query<Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>>(
            `EXPLAIN (FORMAT JSON) ${BATCHED_APPEND}`,
            batchedAppendParams(batch),
          );
          return out[0]!['QUERY PLAN'][0]!.Plan;
        });
        const reads = scansOf(plan)
          .filter((scan) => scan.relation === 'conversation')
          .map((scan) => scan.type);
        // One read of the table, through its primary key (an index or bitmap scan).
        expect({ mode, reads }).toEqual({
          mode,
          reads: [expect.stringMatching(/^(Index|Index Only|Bitmap Heap) Scan$/)],
        });
      }
    } finally {
      await ds.query('DELETE FROM conversation WHERE id LIKE $1', [`${prefix}-%`]);
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** The table reads of a plan (modified tables are not reads), as `{type, relation}`. */
function scansOf(node: PlanNode): Array<{ type: string; relation: string }> {
  const own =
    node['Relation Name'] !== undefined && node['Node Type'] !== 'ModifyTable'
      ? [{ type: node['Node Type'], relation: node['Relation Name'] }]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}
