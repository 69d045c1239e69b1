import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type RetrieveOptions, type SerializedEvent, TrackerStore } from 'src/core';
import { DataSource, type EntityManager } from 'typeorm';
import { toEventRows } from './persistence/conversation-event.mapper';

/**
 * TrackerStore on PostgreSQL. Every write is one transaction: an upsert of the conversation row
 * hands out the sequence numbers (and row-locks the conversation against concurrent writers),
 * then one `INSERT … SELECT unnest(…)` stores the whole batch, whatever its size.
 */
@Injectable()
export class TypeOrmTrackerStore extends TrackerStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
  }

  async retrieve(
    conversationId: string,
    options: RetrieveOptions = {},
  ): Promise<SerializedEvent[] | null> {
    const rows = await this.dataSource.query<Array<{ data: SerializedEvent }>>(
      options.latestSessionOnly
        ? `SELECT e.data FROM conversation c JOIN conversation_event e ON e.conversation_id = c.id
             AND e.seq >= COALESCE(c.session_start_seq, 0)
           WHERE c.id = $1 ORDER BY e.seq`
        : `SELECT data FROM conversation_event WHERE conversation_id = $1 ORDER BY seq`,
      [conversationId],
    );
    if (rows.length === 0) return null;
    return rows.map((r) => r.data);
  }

  async append(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.dataSource.transaction((manager) =>
      this.appendWith(manager, conversationId, events),
    );
  }

  async replace(conversationId: string, events: readonly SerializedEvent[]): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('DELETE FROM conversation WHERE id = $1', [conversationId]);
      await this.appendWith(manager, conversationId, events);
    });
  }

  async delete(conversationId: string): Promise<boolean> {
    const result = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM conversation WHERE id = $1 RETURNING id',
      [conversationId],
    );
    return result[1] > 0;
  }

  async exists(conversationId: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>('SELECT 1 FROM conversation WHERE id = $1', [
      conversationId,
    ]);
    return rows.length > 0;
  }

  private async appendWith(
    manager: EntityManager,
    conversationId: string,
    events: readonly SerializedEvent[],
  ): Promise<void> {
    if (events.length === 0) return;
    const rows = toEventRows(events);
    const n = events.length;
    // Index (0-based) of the last action_session_start in the batch, or -1.
    const lastSessionStart = rows.lastSessionStartIndex;
    const first = rows.timestamps[0] ?? 0;
    const last = rows.timestamps[n - 1] ?? first;
    const upsert = await manager.query<Array<{ last_seq: number }>>(
      `INSERT INTO conversation AS c (id, started_at, latest_event_time, last_seq, session_start_seq)
       VALUES ($1, $2, $3, $4, CASE WHEN $5::int >= 0 THEN $5::int + 1 ELSE NULL END)
       ON CONFLICT (id) DO UPDATE SET
         last_seq = c.last_seq + $4,
         latest_event_time = GREATEST(c.latest_event_time, EXCLUDED.latest_event_time),
         session_start_seq = CASE WHEN $5::int >= 0 THEN c.last_seq + $5::int + 1 ELSE c.session_start_seq END,
         updated_at = now()
       RETURNING last_seq`,
      [conversationId, first, last, n, lastSessionStart],
    );
    const lastSeq = upsert[0]?.last_seq ?? n;
    const base = lastSeq - n;
    await manager.query(
      `INSERT INTO conversation_event (conversation_id, seq, type_name, "timestamp", intent_name, action_name, data)
       SELECT $1, $2::int + ord, t, ts, i, a, d
       FROM unnest($3::text[], $4::float8[], $5::text[], $6::text[], $7::json[]) WITH ORDINALITY AS x(t, ts, i, a, d, ord)`,
      [conversationId, base, rows.types, rows.timestamps, rows.intents, rows.actions, rows.data],
    );
  }
}
