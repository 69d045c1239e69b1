import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type EncodedEvent,
  noReminderChanges,
  type ReminderChanges,
  type RetrieveOptions,
  type SerializedEvent,
  type StoreVersion,
  TrackerStore,
  type VersionedEvents,
} from 'src/core';
import { isDatabaseUnavailable } from 'src/platform/database/database-errors';
import { DataSource, type EntityManager } from 'typeorm';
import { EventOutbox } from './event-outbox';
import {
  AppendBatcher,
  BATCHED_APPEND,
  batchedAppend,
  batchedAppendParams,
  changesReminders,
  type PendingAppend,
} from './persistence/batched-append';
import {
  type EventRows,
  toEventRows,
  wireEventRows,
} from './persistence/conversation-event.mapper';

/** Inserts the batch at the positions after `up.last_seq - n` (one statement, any size). */
const INSERT_EVENTS = `
  INSERT INTO conversation_event (conversation_id, seq, type_name, "timestamp", intent_name, action_name, data)
  SELECT $1, up.last_seq - $4::int + x.ord, x.t, x.ts::float8, x.i, x.a, x.d
  FROM up, ROWS FROM (json_array_elements_text($6::json), json_array_elements_text($7::json),
    json_array_elements_text($8::json), json_array_elements_text($9::json),
    json_array_elements($10::json))
    WITH ORDINALITY AS x(t, ts, i, a, d, ord)`;

/** New session start pointer: the batch's last action_session_start ($5, 0-based) if any. */
const SESSION_START = (oldLastSeq: string): string =>
  `CASE WHEN $5::int >= 0 THEN ${oldLastSeq} + $5::int + 1 ELSE c.session_start_seq END`;

/** Upsert: creates the conversation or moves its end; serialises writers at the row lock. */
const UPSERT_APPEND = upsertAppend(false);

/** UPSERT_APPEND, optionally with the turn's event_outbox row (event broker configured). */
function upsertAppend(withOutbox: boolean): string {
  const outbox = withOutbox
    ? `, outbox AS (
    INSERT INTO event_outbox (conversation_id, first_seq, last_seq)
    SELECT $1, up.last_seq - $4::int + 1, up.last_seq FROM up)`
    : '';
  return `
  WITH up AS (
    INSERT INTO conversation AS c (id, started_at, latest_event_time, last_seq, session_start_seq, assistant_id)
    VALUES ($1, $2, $3, $4, CASE WHEN $5::int >= 0 THEN $5::int + 1 END, $11)
    ON CONFLICT (id) DO UPDATE SET
      last_seq = c.last_seq + $4,
      latest_event_time = GREATEST(c.latest_event_time, EXCLUDED.latest_event_time),
      session_start_seq = ${SESSION_START('c.last_seq')},
      assistant_id = COALESCE(c.assistant_id, EXCLUDED.assistant_id),
      updated_at = now()
    RETURNING c.generation, c.last_seq
  ), ins AS (${INSERT_EVENTS})${outbox}
  SELECT generation, last_seq FROM up`;
}

const UPSERT_APPEND_OUTBOX = upsertAppend(true);
const BATCHED_APPEND_OUTBOX = batchedAppend(true);
const BATCHED_APPEND_REMINDERS = batchedAppend(false, true);
const BATCHED_APPEND_OUTBOX_REMINDERS = batchedAppend(true, true);

/** The batched append's variants by (outbox, reminders): prepared statement name and text. */
const BATCHED: Record<string, readonly [string, string]> = {
  'false,false': ['parley_batched_append', BATCHED_APPEND],
  'true,false': ['parley_batched_append_outbox', BATCHED_APPEND_OUTBOX],
  'false,true': ['parley_batched_append_reminders', BATCHED_APPEND_REMINDERS],
  'true,true': ['parley_batched_append_outbox_reminders', BATCHED_APPEND_OUTBOX_REMINDERS],
};

/** All events (or the latest session) as one JSON array text, with the version read. */
const READ_EVENTS = (latestSessionOnly: boolean): string => `
  SELECT c.generation, c.last_seq, c.session_start_seq,
    (SELECT json_agg(e.data ORDER BY e.seq)::text FROM conversation_event e
      WHERE e.conversation_id = c.id
      ${latestSessionOnly ? 'AND e.seq >= COALESCE(c.session_start_seq, 0)' : ''}) AS events
  FROM conversation c WHERE c.id = $1`;

/** The events after a known position, if the conversation is still of the same generation. */
const READ_AFTER = `
  SELECT c.generation, c.last_seq,
    (SELECT json_agg(e.data ORDER BY e.seq)::text FROM conversation_event e
      WHERE e.conversation_id = c.id AND e.seq > $2) AS events
  FROM conversation c WHERE c.id = $1 AND c.generation = $3`;

/** The part of pg's Pool this store uses for named (server-side prepared) statements. */
interface PgPool {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

interface VersionRow {
  generation: string;
  last_seq: number;
}

/**
 * TrackerStore on PostgreSQL. Every append is ONE statement: a data-modifying CTE that moves
 * the conversation row's end (handing out sequence numbers, row-locking concurrent writers)
 * and inserts the whole batch through `unnest` — with the turns' reminder changes (table
 * `reminder`, owned by the reminders module) when there are any, so events and reminders
 * commit or fail together. Reads aggregate the events server-side into
 * one JSON array, so the client parses one string instead of thousands of rows.
 */
@Injectable()
export class PostgresTrackerStore extends TrackerStore {
  private readonly batcher = new AppendBatcher((batch) => this.writeBatch(batch));

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: EventOutbox,
  ) {
    super();
  }

  /**
   * Runs a hot statement as a named prepared statement on pg's pool (TypeORM's own query()
   * cannot name statements), so PostgreSQL parses and plans it once per connection instead of
   * on every request.
   */
  private async prepared<R>(name: string, text: string, values: unknown[]): Promise<R[]> {
    const pool = (this.dataSource.driver as unknown as { master: PgPool }).master;
    const result = await pool.query<R>({ name, text, values });
    return result.rows;
  }

  async retrieve(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<SerializedEvent[] | null> {
    return (await this.retrieveVersioned(conversationId, options))?.events ?? null;
  }

  async retrieveVersioned(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<VersionedEvents | null> {
    const latest = options.latestSessionOnly === true;
    const rows = await this.prepared<
      VersionRow & { session_start_seq: number | null; events: string | null }
    >(latest ? 'parley_read_session' : 'parley_read_all', READ_EVENTS(latest), [conversationId]);
    const row = rows[0];
    if (row === undefined || row.events === null) return null;
    return {
      events: JSON.parse(row.events) as SerializedEvent[],
      version: { generation: row.generation, lastSeq: row.last_seq },
      firstSeq: latest ? Math.max(1, row.session_start_seq ?? 1) : 1,
    };
  }

  async retrieveAfter(
    conversationId: string,
    after: StoreVersion,
  ): Promise<VersionedEvents | null> {
    const rows = await this.prepared<VersionRow & { events: string | null }>(
      'parley_read_after',
      READ_AFTER,
      [conversationId, after.lastSeq, after.generation],
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      events: row.events === null ? [] : (JSON.parse(row.events) as SerializedEvent[]),
      version: { generation: row.generation, lastSeq: row.last_seq },
      firstSeq: after.lastSeq + 1,
    };
  }

  async version(conversationId: string): Promise<StoreVersion | null> {
    const rows = await this.prepared<VersionRow>(
      'parley_version',
      'SELECT generation, last_seq FROM conversation WHERE id = $1',
      [conversationId],
    );
    const row = rows[0];
    return row ? { generation: row.generation, lastSeq: row.last_seq } : null;
  }

  async append(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const outbox = this.outbox.enabled;
    await this.prepared(
      outbox ? 'parley_upsert_append_outbox' : 'parley_upsert_append',
      outbox ? UPSERT_APPEND_OUTBOX : UPSERT_APPEND,
      params(conversationId, wireEventRows(events)),
    );
    if (outbox) this.outbox.written();
  }

  appendIfUnchanged(
    conversationId: string,
    events: readonly EncodedEvent[],
    expected: StoreVersion | null,
    reminders?: ReminderChanges,
  ): Promise<StoreVersion | null> {
    // Nothing to write: still only "unchanged" when the conversation is at `expected`.
    if (events.length === 0) return this.versionIfAt(conversationId, expected);
    return this.batcher.submit({
      conversationId,
      rows: toEventRows(events),
      expected,
      traceparent: this.outbox.enabled ? this.outbox.currentTraceparent() : null,
      reminders: reminders === undefined || noReminderChanges(reminders) ? null : reminders,
    });
  }

  private async versionIfAt(
    conversationId: string,
    expected: StoreVersion | null,
  ): Promise<StoreVersion | null> {
    const current = await this.version(conversationId);
    const same =
      current !== null &&
      expected !== null &&
      current.generation === expected.generation &&
      current.lastSeq === expected.lastSeq;
    return same ? current : null;
  }

  /**
   * Writes a batch in one statement. Should the statement fail as a whole, each write is tried
   * alone, so one bad write cannot take the others of its batch down with it — unless the
   * database is unreachable, when every write of the batch fails with it at once.
   */
  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    let rows: Array<VersionRow & { id: string }>;
    const outbox = this.outbox.enabled;
    // Most turns change no reminder: their batches keep the statement without the reminder CTEs.
    const reminders = changesReminders(batch);
    const [name, text] = BATCHED[`${outbox},${reminders}`] as readonly [string, string];
    try {
      rows = await this.prepared(name, text, batchedAppendParams(batch, outbox, reminders));
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) throw error;
      await Promise.all(batch.map((p) => this.writeBatch([p]).catch((e: unknown) => p.reject(e))));
      return;
    }
    const written = new Map(rows.map((r) => [r.id, r]));
    for (const p of batch) {
      const row = written.get(p.conversationId);
      p.resolve(row ? { generation: row.generation, lastSeq: row.last_seq } : null);
    }
    if (outbox && rows.length > 0) this.outbox.written();
  }

  /**
   * Replaces the events; the conversation's tags stay on it (same transaction). With a broker
   * configured, the same transaction writes the outbox row of the replacement: as Rasa's
   * tracker-store save (TrackerEventDiffEngine: the new list minus as many events as the stored
   * tracker had), the events at positions after the ones the broker already has — the stored
   * count, or less when turns of the old conversation still wait in the outbox: those rows are
   * dropped (their events are gone) and the replacement is published from their first position,
   * so the consumer's stream has no gap.
   */
  async replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    const outbox = this.outbox.enabled;
    let published = false;
    await this.dataSource.transaction(async (manager: EntityManager) => {
      const before = await manager.query<Array<{ last_seq: number }>>(
        'SELECT last_seq FROM conversation WHERE id = $1 FOR UPDATE',
        [conversationId],
      );
      const tags = await manager.query<Array<{ tag_id: string }>>(
        'SELECT tag_id FROM conversation_tag_link WHERE conversation_id = $1',
        [conversationId],
      );
      let sent = before[0]?.last_seq ?? 0;
      if (outbox) {
        // Waits for a relay holding these rows: once it committed they are gone (published).
        const [pending] = await manager.query<[Array<{ first_seq: number }>, number]>(
          'DELETE FROM event_outbox WHERE conversation_id = $1 RETURNING first_seq',
          [conversationId],
        );
        for (const row of pending) sent = Math.min(sent, row.first_seq - 1);
      }
      await manager.query('DELETE FROM conversation WHERE id = $1', [conversationId]);
      if (events.length > 0) {
        await manager.query(UPSERT_APPEND, params(conversationId, wireEventRows(events)));
        if (tags.length > 0) {
          await manager.query(
            'INSERT INTO conversation_tag_link (conversation_id, tag_id) SELECT $1, unnest($2::uuid[])',
            [conversationId, tags.map((t) => t.tag_id)],
          );
        }
        if (outbox && events.length > sent) {
          await manager.query(
            'INSERT INTO event_outbox (conversation_id, first_seq, last_seq) VALUES ($1, $2, $3)',
            [conversationId, sent + 1, events.length],
          );
          published = true;
        }
      }
    });
    if (published) this.outbox.written();
  }

  async delete(conversationId: string): Promise<boolean> {
    const result = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM conversation WHERE id = $1 RETURNING id',
      [conversationId],
    );
    return result[1] > 0;
  }

  async exists(conversationId: string): Promise<boolean> {
    return (await this.version(conversationId)) !== null;
  }
}

function params(conversationId: string, rows: EventRows): unknown[] {
  const n = rows.types.length;
  const first = rows.timestamps[0] ?? 0;
  const last = rows.timestamps[n - 1] ?? first;
  return [
    conversationId,
    first,
    last,
    n,
    rows.lastSessionStartIndex,
    JSON.stringify(rows.types),
    JSON.stringify(rows.timestamps),
    JSON.stringify(rows.intents),
    JSON.stringify(rows.actions),
    `[${rows.data.join(',')}]`,
    rows.assistantId,
  ];
}
