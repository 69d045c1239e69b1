import { encodeWireEvent, type SerializedEvent } from 'src/core';
import {
  BATCHED_APPEND,
  batchedAppendParams,
} from 'src/modules/tracker/persistence/batched-append';
import { toEventRows } from 'src/modules/tracker/persistence/conversation-event.mapper';
import { TypeOrmTrackerStore } from 'src/modules/tracker/typeorm-tracker-store';
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

describe(TypeOrmTrackerStore.name, () => {
  let ds: DataSource;
  let store: TypeOrmTrackerStore;

  beforeAll(async () => {
    ds = await new DataSource(buildTypeOrmOptions(process.env.DATABASE_URL ?? '', 4)).initialize();
    store = new TypeOrmTrackerStore(ds);
  });
  afterAll(() => ds.destroy());

  it('returns null for an unknown conversation', async () => {
    expect(await store.retrieve(id('none'))).toBeNull();
    expect(await store.exists(id('none'))).toBe(false);
    expect(await store.delete(id('none'))).toBe(false);
  });

  it('keeps events verbatim, key order included, in append order', async () => {
    const c = id('verbatim');
    const first = {
      event: 'action',
      timestamp: 1,
      metadata: { model_id: 'm' },
      name: 'action_listen',
      policy: null,
      confidence: null,
      action_text: null,
      hide_rule_turn: false,
    };
    await store.append(c, [first]);
    await store.append(c, [
      ev('slot', 2, { name: 'a', value: { z: 1, a: [1, 'x'] } }),
      ev('pause', 3),
    ]);
    const got = await store.retrieve(c);
    expect(got).toEqual([
      first,
      ev('slot', 2, { name: 'a', value: { z: 1, a: [1, 'x'] } }),
      ev('pause', 3),
    ]);
    expect(Object.keys(got![0]!)).toEqual(Object.keys(first));
    expect(Object.keys(got![1]!.value as object)).toEqual(['z', 'a']);
  });

  it('reads the latest session from its action_session_start on', async () => {
    const c = id('sessions');
    const start = (t: number) => [
      ev('action', t, { name: 'action_session_start' }),
      ev('session_started', t + 0.1),
    ];
    await store.append(c, [...start(1), ev('slot', 2, { name: 'a', value: 1 })]);
    await store.append(c, [...start(10), ev('slot', 11, { name: 'a', value: 2 })]);
    await store.append(c, [ev('pause', 12)]);
    const latest = await store.retrieve(c, { latestSessionOnly: true });
    expect(latest?.map((e) => e.timestamp)).toEqual([10, 10.1, 11, 12]);
    expect(await store.retrieve(c)).toHaveLength(7);
  });

  it('replaces all events atomically and deletes', async () => {
    const c = id('replace');
    await store.append(c, [ev('pause', 1), ev('resume', 2)]);
    await store.replace(c, [ev('restart', 5)]);
    expect(await store.retrieve(c)).toEqual([ev('restart', 5)]);
    await store.replace(c, []);
    expect(await store.exists(c)).toBe(false);
    await store.append(c, [ev('pause', 1)]);
    expect(await store.delete(c)).toBe(true);
    expect(await store.retrieve(c)).toBeNull();
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

  it('stores strings with quotes, backslashes and unicode intact', async () => {
    const c = id('text');
    const text = 'say "hi" \\ {x} 👋 nul \u0000 end';
    await store.append(c, [ev('bot', 1, { text, metadata: {}, data: {} })]);
    expect((await store.retrieve(c))?.[0]?.text).toBe(text);
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

  it('appends conditionally on the version and writes nothing on a conflict', async () => {
    const c = id('versioned');
    const v1 = await store.appendIfUnchanged(c, [enc('pause', 1)], null);
    expect(v1).toEqual({ generation: expect.any(String), lastSeq: 1 });
    expect(await store.appendIfUnchanged(c, [enc('resume', 2)], null)).toBeNull();
    const v2 = await store.appendIfUnchanged(c, [enc('resume', 2), enc('pause', 3)], v1);
    expect(v2).toEqual({ generation: v1!.generation, lastSeq: 3 });
    expect(await store.appendIfUnchanged(c, [enc('restart', 4)], v1)).toBeNull();
    expect((await store.retrieve(c))?.map((e) => e.event)).toEqual(['pause', 'resume', 'pause']);
    expect(await store.version(c)).toEqual(v2);
  });

  it('gives a replaced or re-created conversation a new generation', async () => {
    const c = id('generation');
    const v1 = await store.appendIfUnchanged(c, [enc('pause', 1)], null);
    await store.replace(c, [ev('resume', 2)]);
    const v2 = await store.version(c);
    expect(v2?.lastSeq).toBe(1);
    expect(v2?.generation).not.toBe(v1?.generation);
    expect(await store.appendIfUnchanged(c, [enc('pause', 3)], v1)).toBeNull();
    await store.delete(c);
    expect(await store.appendIfUnchanged(c, [enc('pause', 3)], v2)).toBeNull();
    expect(await store.exists(c)).toBe(false);
  });

  it('reads the latest session with its version and position', async () => {
    const c = id('versioned-read');
    await store.append(c, [ev('action', 1, { name: 'action_session_start' }), ev('pause', 2)]);
    await store.append(c, [ev('action', 3, { name: 'action_session_start' }), ev('resume', 4)]);
    const read = await store.retrieveVersioned(c, { latestSessionOnly: true });
    expect(read?.firstSeq).toBe(3);
    expect(read?.version.lastSeq).toBe(4);
    expect(read?.events.map((e) => e.timestamp)).toEqual([3, 4]);
    expect(await store.retrieveVersioned(id('absent'))).toBeNull();
  });

  it('writes a batch of concurrent appends, each judged on its own version', async () => {
    const fresh = [id('batch-a'), id('batch-b'), id('batch-c')];
    const existing = id('batch-old');
    const v0 = await store.appendIfUnchanged(existing, [enc('pause', 1)], null);
    const stale = { generation: v0!.generation, lastSeq: 7 };
    const results = await Promise.all([
      ...fresh.map((c, i) =>
        store.appendIfUnchanged(c, [enc('pause', i), enc('resume', i + 0.5)], null),
      ),
      store.appendIfUnchanged(existing, [enc('restart', 2)], stale),
      store.appendIfUnchanged(id('batch-missing'), [enc('pause', 1)], stale),
    ]);
    expect(results.slice(0, 3).map((r) => r?.lastSeq)).toEqual([2, 2, 2]);
    expect(results[3]).toBeNull();
    expect(results[4]).toBeNull();
    for (const c of fresh) {
      expect((await store.retrieve(c))?.map((e) => e.event)).toEqual(['pause', 'resume']);
    }
    expect(await store.retrieve(existing)).toHaveLength(1);
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
