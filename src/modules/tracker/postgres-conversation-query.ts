import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import {
  type AddTagOutcome,
  type ConversationPage,
  type ConversationPageQuery,
  ConversationQuery,
  type ConversationSnapshot,
  type ConversationSummary,
  type ConversationTag,
  DEFAULT_ASSISTANT_ID,
  type EventWindow,
  type WindowEvent,
} from './conversation-query';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tag id that can exist (tags have uuid ids); anything else is simply unknown. */
function tagIdOrNull(id: string): string | null {
  return UUID.test(id) ? id : null;
}

/**
 * The page of conversations without their events: ids from the index
 * `(assistant_id, started_at DESC, id)`, each with its event count (`last_seq`: events are
 * numbered 1…n) and tags, and `count` in the same snapshot.
 */
function pageSql(query: ConversationPageQuery): string {
  const where = [
    query.assistantId === DEFAULT_ASSISTANT_ID
      ? '(c.assistant_id = $1 OR c.assistant_id IS NULL)'
      : 'c.assistant_id = $1',
  ];
  let n = 3;
  if (query.from !== null) where.push(`c.started_at >= $${++n}`);
  if (query.to !== null) where.push(`c.started_at <= $${++n}`);
  const tags = new Set(query.tagIds);
  if (tags.size > 0) {
    // A tag id that is no uuid is on no conversation: then nothing matches.
    where.push(
      [...tags].every((id) => tagIdOrNull(id) !== null)
        ? `(SELECT count(*) FROM conversation_tag_link l
            WHERE l.conversation_id = c.id AND l.tag_id = ANY($${++n}::uuid[])) = ${tags.size}`
        : 'FALSE',
    );
  }
  const condition = where.join(' AND ');
  // Without a time or tag filter the count is kept per assistant (conversation_count, by
  // triggers).
  const countSql =
    query.from === null && query.to === null && tags.size === 0
      ? `(SELECT COALESCE(sum(n), 0) FROM conversation_count
          WHERE assistant_key = $1 ${query.assistantId === DEFAULT_ASSISTANT_ID ? "OR assistant_key = ''" : ''})::int AS count`
      : `(SELECT count(*) FROM conversation c WHERE ${condition})::int AS count`;
  return `
    WITH page AS (
      SELECT c.id, c.started_at, c.last_seq FROM conversation c
      WHERE ${condition}
      ORDER BY c.started_at DESC, c.id
      LIMIT $2 OFFSET $3
    )
    SELECT ${countSql},
      (SELECT COALESCE(json_agg(json_build_object(
          'id', p.id,
          'eventCount', p.last_seq,
          'tags', COALESCE((SELECT json_agg(json_build_object('id', t.id, 'name', t.name,
                                    'assistantId', t.assistant_id) ORDER BY t.name, t.id)
                            FROM conversation_tag_link l JOIN conversation_tag t ON t.id = l.tag_id
                            WHERE l.conversation_id = p.id), '[]'::json)
        ) ORDER BY p.started_at DESC, p.id), '[]'::json) FROM page p)::text AS page`;
}

/** The event windows `(id, seq > lo, seq <= hi)`, one row per window. */
const WINDOWS = `unnest($1::text[], $2::int[], $3::int[]) WITH ORDINALITY AS w(id, lo, hi, ord)
  JOIN conversation_event e ON e.conversation_id = w.id AND e.seq > w.lo AND e.seq <= w.hi`;

/** Bytes of the windows' stored events, read one row at a time (an aggregate: none is held). */
const WINDOW_BYTES_SQL = `SELECT COALESCE(sum(octet_length(e.data::text)), 0)::float8 AS bytes
  FROM ${WINDOWS}`;

/** The windows' events in window order; LIMIT is the event count the caller allows. */
const WINDOW_EVENTS_SQL = `SELECT w.ord::int AS ord, e.data::text AS data FROM ${WINDOWS}
  ORDER BY w.ord, e.seq LIMIT $4`;

function windowParams(windows: readonly EventWindow[]): unknown[] {
  return [
    windows.map((w) => w.conversationId),
    windows.map((w) => w.after),
    windows.map((w) => w.upTo),
  ];
}

/** Reads inside one REPEATABLE READ transaction. */
class PostgresSnapshot implements ConversationSnapshot {
  constructor(private readonly manager: EntityManager) {}

  async page(query: ConversationPageQuery): Promise<ConversationPage> {
    const params: unknown[] = [query.assistantId, query.limit, query.offset];
    if (query.from !== null) params.push(query.from);
    if (query.to !== null) params.push(query.to);
    const tags = [...new Set(query.tagIds)];
    if (tags.length > 0 && tags.every((id) => tagIdOrNull(id) !== null)) params.push(tags);
    const rows = await this.manager.query<Array<{ count: number; page: string }>>(
      pageSql(query),
      params,
    );
    const row = rows[0];
    if (row === undefined) return { conversations: [], count: 0 };
    return { count: row.count, conversations: JSON.parse(row.page) as ConversationSummary[] };
  }

  async storedBytes(windows: readonly EventWindow[]): Promise<number> {
    if (windows.length === 0) return 0;
    const [size] = await this.manager.query<Array<{ bytes: number }>>(
      WINDOW_BYTES_SQL,
      windowParams(windows),
    );
    return size?.bytes ?? 0;
  }

  async events(windows: readonly EventWindow[], limit: number): Promise<WindowEvent[]> {
    if (windows.length === 0 || limit <= 0) return [];
    const rows = await this.manager.query<Array<{ ord: number; data: string }>>(WINDOW_EVENTS_SQL, [
      ...windowParams(windows),
      limit,
    ]);
    return rows.map((r) => ({ window: r.ord - 1, json: r.data }));
  }
}

/** ConversationQuery on the PostgreSQL tables of the tracker store. */
@Injectable()
export class PostgresConversationQuery extends ConversationQuery {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
  }

  inSnapshot<T>(read: (snapshot: ConversationSnapshot) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', (manager) =>
      read(new PostgresSnapshot(manager)),
    );
  }

  async addTag(conversationId: string, tagId: string): Promise<AddTagOutcome> {
    const rows = await this.dataSource.query<
      Array<{
        conversation_assistant: string | null;
        has_conversation: boolean;
        tag_assistant: string | null;
      }>
    >(
      `WITH c AS (SELECT id, COALESCE(assistant_id, '${DEFAULT_ASSISTANT_ID}') AS assistant_id
                  FROM conversation WHERE id = $1),
            t AS (SELECT id, assistant_id FROM conversation_tag WHERE id = $2::uuid),
            ins AS (
              INSERT INTO conversation_tag_link (conversation_id, tag_id)
              SELECT c.id, t.id FROM c, t WHERE c.assistant_id = t.assistant_id
              ON CONFLICT DO NOTHING RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM c) AS has_conversation,
              (SELECT assistant_id FROM c) AS conversation_assistant,
              (SELECT assistant_id FROM t) AS tag_assistant`,
      [conversationId, tagIdOrNull(tagId)],
    );
    const row = rows[0];
    if (!row?.has_conversation) return { kind: 'conversation-not-found' };
    if (row.tag_assistant === null) return { kind: 'tag-not-found' };
    if (row.tag_assistant !== row.conversation_assistant) {
      return {
        kind: 'other-assistant',
        tagAssistantId: row.tag_assistant,
        conversationAssistantId: row.conversation_assistant ?? DEFAULT_ASSISTANT_ID,
      };
    }
    return { kind: 'added' };
  }

  async removeTag(conversationId: string, tagId: string): Promise<void> {
    const id = tagIdOrNull(tagId);
    if (id === null) return;
    await this.dataSource.query(
      'DELETE FROM conversation_tag_link WHERE conversation_id = $1 AND tag_id = $2::uuid',
      [conversationId, id],
    );
  }

  /** One statement, so one transaction; events and tag links go with their conversations. */
  async deleteConversations(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const result = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM conversation WHERE id = ANY($1::text[]) RETURNING id',
      [[...new Set(ids)]],
    );
    return result[1];
  }

  tags(assistantId: string): Promise<ConversationTag[]> {
    return this.dataSource.query<ConversationTag[]>(
      `SELECT id, name, assistant_id AS "assistantId" FROM conversation_tag
       WHERE assistant_id = $1 ORDER BY name, id`,
      [assistantId],
    );
  }

  async createTag(assistantId: string, name: string): Promise<ConversationTag> {
    const rows = await this.dataSource.query<ConversationTag[]>(
      `INSERT INTO conversation_tag (assistant_id, name) VALUES ($1, $2)
       ON CONFLICT (assistant_id, name) DO UPDATE SET name = EXCLUDED.name
       RETURNING id, name, assistant_id AS "assistantId"`,
      [assistantId, name],
    );
    return rows[0] as ConversationTag;
  }

  async deleteTag(tagId: string): Promise<boolean> {
    const id = tagIdOrNull(tagId);
    if (id === null) return false;
    const result = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM conversation_tag WHERE id = $1::uuid RETURNING id',
      [id],
    );
    return result[1] > 0;
  }
}
