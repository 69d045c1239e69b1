import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Pool, type PoolClient } from 'pg';
import { NoTracing, type Tracer } from 'src/core';
import { DataSource } from 'typeorm';

/** One stored event read for publishing. */
export interface OutboxEvent {
  readonly conversationId: string;
  /** The conversation row's generation (a new one when a conversation is re-created). */
  readonly generation: string;
  readonly seq: number;
  /** The event's JSON as stored (the tracker API's serialisation). */
  readonly data: string;
}

/** How much waits in the outbox. */
export interface OutboxBacklog {
  readonly turns: number;
  readonly events: number;
  /** Age of the oldest row in seconds (0 when empty). */
  readonly oldestAgeSeconds: number;
}

/** Which stored events `parley export` publishes (Rasa's `rasa export` options). */
export interface ExportFilter {
  /** Events with `timestamp >= minimumTimestamp` (float seconds). */
  readonly minimumTimestamp?: number;
  /** Events with `timestamp < maximumTimestamp`. */
  readonly maximumTimestamp?: number;
  readonly conversationIds?: readonly string[];
}

/**
 * Claims up to $1 outbox rows, oldest first, skipping rows another relay holds; of those, keeps
 * only rows with no earlier row of their conversation held elsewhere (that one goes out first),
 * and returns their events in (row, seq) order. A row whose events are gone (the conversation
 * was deleted) comes back once with null columns, so it is deleted too.
 */
const CLAIM = `
  WITH claimed AS (
    SELECT o.id, o.conversation_id, o.first_seq, o.last_seq, o.traceparent FROM event_outbox o
    ORDER BY o.id LIMIT $1 FOR UPDATE SKIP LOCKED
  ), ready AS (
    SELECT c.* FROM claimed c WHERE NOT EXISTS (
      SELECT 1 FROM event_outbox p
      WHERE p.conversation_id = c.conversation_id AND p.id < c.id
        AND p.id NOT IN (SELECT id FROM claimed))
  )
  SELECT r.id::text AS id, r.conversation_id, r.traceparent, g.generation, e.seq,
    e.data::text AS data
  FROM ready r
  LEFT JOIN conversation g ON g.id = r.conversation_id
  LEFT JOIN conversation_event e
    ON e.conversation_id = r.conversation_id AND e.seq BETWEEN r.first_seq AND r.last_seq
  ORDER BY r.id, e.seq`;

const BACKLOG = `
  SELECT count(*)::int AS turns, COALESCE(sum(last_seq - first_seq + 1), 0)::float8 AS events,
    COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age
  FROM event_outbox`;

interface ClaimRow {
  id: string;
  conversation_id: string;
  traceparent: string | null;
  generation: string | null;
  seq: number | null;
  data: string | null;
}

/**
 * The transactional outbox of the event broker on PostgreSQL. The event-broker module turns
 * it on (`enable()`) when endpoints.yml configures a broker; the tracker store then writes one
 * outbox row per appended turn in the append's statement and calls the `onWritten` listeners
 * after the commit (the relay's in-process wake-up). `relay()` publishes a claimed batch and
 * deletes its rows only when the publish resolved: at-least-once.
 */
@Injectable()
export class EventOutbox {
  private on = false;
  private readonly listeners: Array<() => void> = [];
  private tracer: Tracer = new NoTracing();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  get enabled(): boolean {
    return this.on;
  }

  /** Turns outbox writing on (before the first turn: the broker module does it at start). */
  enable(): void {
    this.on = true;
  }

  /**
   * Traces the outbox: each row keeps the traceparent of the turn that wrote it, and each
   * relayed batch is a `parley.outbox.publish` span linked to the turns it publishes.
   */
  useTracer(tracer: Tracer): void {
    this.tracer = tracer;
  }

  /** The current turn's traceparent for the outbox row it writes (null when not traced). */
  currentTraceparent(): string | null {
    return this.tracer.currentTraceparent();
  }

  onWritten(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Called by the tracker store after outbox rows were committed. */
  written(): void {
    for (const listener of this.listeners) listener();
  }

  private get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  /**
   * Claims up to `limit` turns, hands their events to `publish` (per conversation in seq order,
   * conversations in the order their turns were written) and deletes the rows once `publish`
   * resolved, in one transaction: a failed publish or a crash leaves the rows for the next try.
   * Returns how many turns were relayed (0: nothing to do).
   */
  async relay(
    limit: number,
    publish: (events: OutboxEvent[]) => Promise<void>,
  ): Promise<{ turns: number; events: number }> {
    const client = await this.pool.connect();
    // Held across the broker's publish (no query in flight): without a listener of its own, a
    // connection the server terminates meanwhile would be an unhandled 'error' event that ends
    // the process. The next query on it fails, the batch rolls back and is relayed again.
    let lost: Error | undefined;
    const onError = (err: Error): void => {
      lost ??= err;
    };
    client.on('error', onError);
    let broken: unknown = undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<ClaimRow>({
        name: 'parley_outbox_claim',
        text: CLAIM,
        values: [limit],
      });
      if (rows.length === 0) {
        await client.query('COMMIT');
        return { turns: 0, events: 0 };
      }
      const ids = new Set<string>();
      const links = new Set<string>();
      const events: OutboxEvent[] = [];
      for (const row of rows) {
        ids.add(row.id);
        if (row.traceparent !== null) links.add(row.traceparent);
        if (row.seq === null || row.data === null) continue;
        events.push({
          conversationId: row.conversation_id,
          generation: row.generation ?? '',
          seq: row.seq,
          data: row.data,
        });
      }
      if (events.length > 0) {
        await this.tracer.inSpan(
          'parley.outbox.publish',
          { 'parley.outbox.turns': ids.size, 'parley.outbox.events': events.length },
          () => publish(events),
          [...links],
        );
      }
      await client.query('DELETE FROM event_outbox WHERE id = ANY($1::bigint[])', [[...ids]]);
      await client.query('COMMIT');
      return { turns: ids.size, events: events.length };
    } catch (error) {
      broken = await rollback(client);
      throw error;
    } finally {
      client.removeListener('error', onError);
      const dropped = broken instanceof Error ? broken : lost;
      client.release(dropped);
    }
  }

  async backlog(): Promise<OutboxBacklog> {
    const { rows } = await this.pool.query<{ turns: number; events: number; age: number }>(BACKLOG);
    const row = rows[0];
    return {
      turns: row?.turns ?? 0,
      events: row?.events ?? 0,
      oldestAgeSeconds: Math.max(0, row?.age ?? 0),
    };
  }

  /**
   * Stored events for `parley export`, per conversation in seq order, `pageSize` at a time
   * (keyset pagination on `(conversation_id, seq)`).
   */
  async *exportEvents(filter: ExportFilter, pageSize = 1000): AsyncGenerator<OutboxEvent[]> {
    let afterId = '';
    let afterSeq = 0;
    for (;;) {
      const { rows } = await this.pool.query<{
        conversation_id: string;
        generation: string;
        seq: number;
        data: string;
      }>(
        `SELECT e.conversation_id, c.generation, e.seq, e.data::text AS data
         FROM conversation_event e JOIN conversation c ON c.id = e.conversation_id
         WHERE (e.conversation_id, e.seq) > ($1, $2)
           AND ($3::float8 IS NULL OR e."timestamp" >= $3)
           AND ($4::float8 IS NULL OR e."timestamp" < $4)
           AND ($5::text[] IS NULL OR e.conversation_id = ANY($5))
         ORDER BY e.conversation_id, e.seq LIMIT $6`,
        [
          afterId,
          afterSeq,
          filter.minimumTimestamp ?? null,
          filter.maximumTimestamp ?? null,
          filter.conversationIds ? [...filter.conversationIds] : null,
          pageSize,
        ],
      );
      if (rows.length === 0) return;
      yield rows.map((r) => ({
        conversationId: r.conversation_id,
        generation: r.generation,
        seq: r.seq,
        data: r.data,
      }));
      const last = rows[rows.length - 1] as { conversation_id: string; seq: number };
      afterId = last.conversation_id;
      afterSeq = last.seq;
      if (rows.length < pageSize) return;
    }
  }
}

/** Rolls back; returns the error when the connection itself is broken (not to be reused). */
async function rollback(client: PoolClient): Promise<unknown> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
