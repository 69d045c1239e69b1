import { entitiesKey, type ReminderChanges, type StoreVersion } from 'src/core';
import { type EventRows } from './conversation-event.mapper';

/** One conditional append waiting to be written. */
export interface PendingAppend {
  readonly conversationId: string;
  readonly rows: EventRows;
  readonly expected: StoreVersion | null;
  /** The writing turn's W3C `traceparent` for its outbox row (null: not traced). */
  readonly traceparent: string | null;
  /** The turn's reminder changes, written by the same statement (absent or null: none). */
  readonly reminders?: ReminderChanges | null;
  resolve(version: StoreVersion | null): void;
  reject(error: unknown): void;
}

/**
 * The outbox rows of BATCHED_APPEND: one per conversation written, its appended range and the
 * writing turn's traceparent ($16, only in this variant).
 */
const OUTBOX_ROWS = `, outbox AS (
    INSERT INTO event_outbox (conversation_id, first_seq, last_seq, traceparent)
    SELECT done.id, done.last_seq - v.n + 1, done.last_seq, tp.t
    FROM done JOIN v ON v.id = done.id
    LEFT JOIN ROWS FROM (json_array_elements_text($16::json)) WITH ORDINALITY AS tp(t, k)
      ON tp.k = v.k
  )`;

/** Milliseconds since the epoch (a JSON number) as a timestamptz. */
const TS = (ms: string): string => `to_timestamp(${ms} / 1000)`;

/**
 * The reminder changes of the turns written (`reminderChanges`), in the same statement as their
 * events, so both commit or fail together; only for conversations in `done` (a refused append
 * changes no reminder). `$a`: the deletions, one JSON object each — `{k, name}` (by name),
 * `{k, intent, key}` (by intent and entities key, null: any) or `{k, before}` (kill_on_user_msg
 * reminders set before a user message) — never of a name the turn schedules: `$b`, the
 * reminders set, replace those rows (one statement must not change a row twice). Same upsert
 * as the reminder store's `schedule`: a re-set reminder is pending again, its claim dropped.
 * The rows to delete are looked up by key (`= ANY (ARRAY(…))`), as the conversations in
 * BATCHED_APPEND: every turn with a user message deletes (kill_on_user_msg), and a join alone
 * may be planned as a scan of the whole table.
 */
const reminderRows = (a: number, b: number): string => `, reminder_gone AS (
    DELETE FROM reminder AS r
    USING json_to_recordset($${a}::json) AS g(k int, name text, intent text, key text, before float8),
      v, done
    WHERE r.conversation_id = ANY (ARRAY(
        SELECT u.id FROM v AS u JOIN json_to_recordset($${a}::json) AS h(k int) ON h.k = u.k))
      AND v.k = g.k AND done.id = v.id AND r.conversation_id = v.id
      AND CASE
        WHEN g.name IS NOT NULL THEN r.name = g.name
        WHEN g.before IS NOT NULL THEN r.kill_on_user_msg AND r.scheduled_at < g.before
        ELSE (g.intent IS NULL OR r.intent = g.intent) AND (g.key IS NULL OR r.entities_key = g.key)
      END
      AND NOT EXISTS (
        SELECT 1 FROM json_to_recordset($${b}::json) AS s(k int, name text)
        WHERE s.k = g.k AND s.name = r.name)
  ), reminder_set AS (
    INSERT INTO reminder AS r (conversation_id, name, intent, entities, entities_key, trigger_at,
      kill_on_user_msg, scheduled_at, output_channel, status, due_at)
    SELECT v.id, s.name, s.intent, s.entities, s.key, ${TS('s.at')}, s.kill, s.scheduled_at,
      s.channel, 'pending', ${TS('s.at')}
    FROM json_to_recordset($${b}::json) AS s(k int, name text, intent text, entities jsonb,
      key text, at float8, kill boolean, scheduled_at float8, channel text)
    JOIN v ON v.k = s.k
    JOIN done ON done.id = v.id
    ON CONFLICT (conversation_id, name) DO UPDATE SET
      intent = EXCLUDED.intent, entities = EXCLUDED.entities, entities_key = EXCLUDED.entities_key,
      trigger_at = EXCLUDED.trigger_at, kill_on_user_msg = EXCLUDED.kill_on_user_msg,
      scheduled_at = EXCLUDED.scheduled_at, output_channel = EXCLUDED.output_channel,
      status = 'pending', due_at = EXCLUDED.due_at, claim_token = NULL, claimed_at = NULL,
      attempts = 0, created_at = now()
  )`;

/**
 * Conditional appends of many conversations in ONE statement: conversations that must not
 * exist yet are inserted (ON CONFLICT DO NOTHING), the others are moved on only where their
 * version still matches, and the events of exactly the conversations that succeeded are
 * inserted. The result names the conversations written, with their new versions.
 *
 * The rows to move on are looked up by key (`c.id = ANY (ARRAY(…))`): matched by the join on
 * `v` alone, PostgreSQL expects `v` to hold 100 rows (its estimate for a set-returning
 * function) and, with thousands of conversations, hash-joins it against a scan of the whole
 * conversation table, for every batch: half of PostgreSQL's time per turn in the dialogue bench.
 */
export const BATCHED_APPEND = batchedAppend(false);

/**
 * BATCHED_APPEND, optionally also writing one `event_outbox` row per appended turn (the
 * conversation and its new `seq` range) in the same statement, hence the same transaction as
 * the events: the event broker's relay publishes exactly what was committed; and optionally
 * the turns' reminder changes (`withReminders`: two parameters more, after the outbox's).
 */
export function batchedAppend(withOutbox: boolean, withReminders = false): string {
  const next = withOutbox ? 17 : 16;
  return `
  WITH v AS (
    SELECT x.id, x.gen::uuid, x.seq::int, x.n::int, x.first_ts::float8, x.last_ts::float8,
      x.ss::int, x.aid, x.k
    FROM ROWS FROM (json_array_elements_text($1::json), json_array_elements_text($2::json),
      json_array_elements_text($3::json), json_array_elements_text($4::json),
      json_array_elements_text($5::json), json_array_elements_text($6::json),
      json_array_elements_text($7::json), json_array_elements_text($15::json))
      WITH ORDINALITY AS x(id, gen, seq, n, first_ts, last_ts, ss, aid, k)
  ), created AS (
    INSERT INTO conversation AS c (id, started_at, latest_event_time, last_seq, session_start_seq, assistant_id)
    SELECT v.id, v.first_ts, v.last_ts, v.n, CASE WHEN v.ss >= 0 THEN v.ss + 1 END, v.aid
    FROM v WHERE v.gen IS NULL
    ON CONFLICT (id) DO NOTHING
    RETURNING c.id, c.generation, c.last_seq
  ), updated AS (
    UPDATE conversation AS c SET
      last_seq = c.last_seq + v.n,
      latest_event_time = GREATEST(c.latest_event_time, v.last_ts),
      session_start_seq = CASE WHEN v.ss >= 0 THEN c.last_seq + v.ss + 1 ELSE c.session_start_seq END,
      assistant_id = COALESCE(c.assistant_id, v.aid),
      updated_at = now()
    FROM v
    WHERE c.id = ANY (ARRAY(SELECT u.id FROM v AS u WHERE u.gen IS NOT NULL))
      AND c.id = v.id AND c.generation = v.gen AND c.last_seq = v.seq
    RETURNING c.id, c.generation, c.last_seq
  ), done AS (
    SELECT * FROM created UNION ALL SELECT * FROM updated
  ), ins AS (
    INSERT INTO conversation_event (conversation_id, seq, type_name, "timestamp", intent_name, action_name, data)
    SELECT done.id, done.last_seq - v.n + x.o::int, x.t, x.ts::float8, x.i, x.a, x.d
    FROM ROWS FROM (json_array_elements_text($8::json), json_array_elements_text($9::json),
      json_array_elements_text($10::json), json_array_elements_text($11::json),
      json_array_elements_text($12::json), json_array_elements_text($13::json),
      json_array_elements($14::json))
      AS x(k, o, t, ts, i, a, d)
    JOIN v ON v.k = x.k::int
    JOIN done ON done.id = v.id
  )${withOutbox ? OUTBOX_ROWS : ''}${withReminders ? reminderRows(next, next + 1) : ''}
  SELECT id, generation, last_seq FROM done`;
}

/**
 * The parameters of BATCHED_APPEND for a batch (conversation ids must be distinct); `outbox`:
 * for the variant that writes outbox rows (one parameter more, the traceparents); `reminders`:
 * for the variant that writes reminder changes (two more, after those).
 */
export function batchedAppendParams(
  batch: readonly PendingAppend[],
  outbox = false,
  reminders = false,
): unknown[] {
  const ids: string[] = [];
  const gens: Array<string | null> = [];
  const seqs: Array<number | null> = [];
  const counts: number[] = [];
  const firsts: number[] = [];
  const lasts: number[] = [];
  const sessionStarts: number[] = [];
  const k: number[] = [];
  const ord: number[] = [];
  const types: string[] = [];
  const timestamps: number[] = [];
  const intents: Array<string | null> = [];
  const actions: Array<string | null> = [];
  const data: string[] = []; // the events' JSON texts, sent as ONE JSON array (see below)
  const assistants: Array<string | null> = [];
  batch.forEach((p, index) => {
    const n = p.rows.types.length;
    ids.push(p.conversationId);
    gens.push(p.expected?.generation ?? null);
    seqs.push(p.expected?.lastSeq ?? null);
    counts.push(n);
    firsts.push(p.rows.timestamps[0] ?? 0);
    lasts.push(p.rows.timestamps[n - 1] ?? 0);
    sessionStarts.push(p.rows.lastSessionStartIndex);
    assistants.push(p.rows.assistantId);
    for (let i = 0; i < n; i++) {
      k.push(index + 1);
      ord.push(i + 1);
    }
    types.push(...p.rows.types);
    timestamps.push(...p.rows.timestamps);
    intents.push(...p.rows.intents);
    actions.push(...p.rows.actions);
    data.push(...p.rows.data);
  });
  // Every column goes as a JSON array text rather than an array literal: pg would quote and
  // escape every element of a literal again (two regular expressions per string), while
  // JSON.stringify is native and the events' JSON is sent as it is.
  const params = [
    JSON.stringify(ids),
    JSON.stringify(gens),
    JSON.stringify(seqs),
    JSON.stringify(counts),
    JSON.stringify(firsts),
    JSON.stringify(lasts),
    JSON.stringify(sessionStarts),
    JSON.stringify(k),
    JSON.stringify(ord),
    JSON.stringify(types),
    JSON.stringify(timestamps),
    JSON.stringify(intents),
    JSON.stringify(actions),
    `[${data.join(',')}]`,
    JSON.stringify(assistants),
  ];
  if (outbox) params.push(JSON.stringify(batch.map((p) => p.traceparent)));
  if (reminders) params.push(...reminderParams(batch));
  return params;
}

/** Whether any write of the batch changes reminders. */
export function changesReminders(batch: readonly PendingAppend[]): boolean {
  return batch.some((p) => p.reminders != null);
}

/** The deletions and the reminders set of a batch, as the reminder CTEs read them. */
function reminderParams(batch: readonly PendingAppend[]): [string, string] {
  const gone: object[] = [];
  const set: object[] = [];
  batch.forEach((p, index) => {
    const k = index + 1;
    const changes = p.reminders;
    if (changes == null) return;
    for (const m of changes.cancel) {
      if (m.name !== null) gone.push({ k, name: m.name });
      else {
        const key = m.entities === null ? null : entitiesKey(m.entities);
        gone.push({ k, name: null, intent: m.intent, key });
      }
    }
    if (changes.killedBefore !== null) gone.push({ k, name: null, before: changes.killedBefore });
    for (const r of changes.schedule) {
      set.push({
        k,
        name: r.name,
        intent: r.intent,
        entities: r.entities,
        key: entitiesKey(r.entities),
        at: r.triggerAt,
        kill: r.killOnUserMessage,
        scheduled_at: r.scheduledAt,
        channel: r.outputChannel,
      });
    }
  });
  return [JSON.stringify(gone), JSON.stringify(set)];
}

/**
 * Groups concurrent conditional appends into batches ("natural batching"): a write goes out at
 * once while fewer than `maxInFlight` batches are running; writes that arrive meanwhile wait
 * and leave together as the next batch. One round trip and one commit then serve many
 * requests, and a lone request never waits for company. One batch in flight measured best
 * (about 2x the appends/s of 4 or 8 in flight on 2 cores: bigger batches beat parallel commits).
 */
export class AppendBatcher {
  private readonly queue: PendingAppend[] = [];
  private inFlight = 0;

  constructor(
    private readonly execute: (batch: PendingAppend[]) => Promise<void>,
    private readonly maxInFlight = 1,
    private readonly maxBatch = 200,
  ) {}

  submit(pending: Omit<PendingAppend, 'resolve' | 'reject'>): Promise<StoreVersion | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({
        conversationId: pending.conversationId,
        rows: pending.rows,
        expected: pending.expected,
        traceparent: pending.traceparent,
        reminders: pending.reminders ?? null,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      this.inFlight++;
      this.execute(batch)
        .catch((error: unknown) => {
          for (const p of batch) p.reject(error);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  /** Up to maxBatch pending writes with distinct conversation ids, oldest first. */
  private takeBatch(): PendingAppend[] {
    const batch: PendingAppend[] = [];
    const ids = new Set<string>();
    for (let i = 0; i < this.queue.length && batch.length < this.maxBatch;) {
      const p = this.queue[i] as PendingAppend;
      if (ids.has(p.conversationId)) {
        i++;
        continue;
      }
      ids.add(p.conversationId);
      batch.push(p);
      this.queue.splice(i, 1);
    }
    return batch;
  }
}
