import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DialogueError } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DataSource } from 'typeorm';
import { type AnswerBudget } from './answer-budget';
import { type ConversationFilter } from './conversation-filters';

export interface ConversationTag {
  id: string;
  name: string;
  assistantId: string;
}

export interface RawConversation {
  id: string;
  eventCount: number;
  conversationEvents: Array<Record<string, unknown>>;
  tags: ConversationTag[];
}

export interface RawConversationPage {
  conversations: RawConversation[];
  count: number;
}

/**
 * Rasa's assistant id for a config without `assistant_id`: conversations whose events carry no
 * assistant id (a server without a model, or events posted without metadata) are listed under it.
 */
export const DEFAULT_ASSISTANT_ID = 'placeholder_default';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Events as Rasa's event broker publishes them: `sender_id` first, then the stored event. */
function withSenderId(event: Record<string, unknown>, id: string): Record<string, unknown> {
  return 'sender_id' in event ? event : { sender_id: id, ...event };
}

/** A tag id that can exist (tags have uuid ids); anything else is simply unknown. */
function tagIdOrNull(id: string): string | null {
  return UUID.test(id) ? id : null;
}

/**
 * The page of conversations without their events: ids from the index
 * `(assistant_id, started_at DESC, id)`, each with its event count (`last_seq`: events are
 * numbered 1…n) and tags, and `count` in the same snapshot.
 */
function pageSql(filter: ConversationFilter): string {
  const where = [
    filter.assistantId === DEFAULT_ASSISTANT_ID
      ? '(c.assistant_id = $1 OR c.assistant_id IS NULL)'
      : 'c.assistant_id = $1',
  ];
  let n = 3;
  if (filter.from !== null) where.push(`c.started_at >= $${++n}`);
  if (filter.to !== null) where.push(`c.started_at <= $${++n}`);
  const condition = where.join(' AND ');
  // Without a time filter the count is kept per assistant (conversation_count, by triggers).
  const countSql =
    filter.from === null && filter.to === null
      ? `(SELECT COALESCE(sum(n), 0) FROM conversation_count
          WHERE assistant_key = $1 ${filter.assistantId === DEFAULT_ASSISTANT_ID ? "OR assistant_key = ''" : ''})::int AS count`
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

/** The event windows `(id, seq > lo, seq <= hi)` of a page, one row per window. */
const WINDOWS = `unnest($1::text[], $2::int[], $3::int[]) WITH ORDINALITY AS w(id, lo, hi, ord)
  JOIN conversation_event e ON e.conversation_id = w.id AND e.seq > w.lo AND e.seq <= w.hi`;

/** What `"sender_id":"<id>",` adds to an event in the answer. */
const SENDER_ID_BYTES = `octet_length(w.id) + 16`;

/**
 * Bytes of the windows' events as answered (stored JSON plus sender_id), read one row at a
 * time (an aggregate: no event is held), and only for windows whose event count already fits
 * the answer's budget.
 */
const WINDOW_BYTES_SQL = `SELECT COALESCE(sum(octet_length(e.data::text) + ${SENDER_ID_BYTES}), 0)::float8 AS bytes
  FROM ${WINDOWS}`;

/** The windows' events in answer order; LIMIT is the event count already checked. */
const WINDOW_EVENTS_SQL = `SELECT w.ord::int AS ord, e.data::text AS data FROM ${WINDOWS}
  ORDER BY w.ord, e.seq LIMIT $4`;

/** What rawConversations reads besides the page itself. */
export interface PageReading {
  /** Whether the events are selected at all (else none is read). */
  readonly events: boolean;
  /** The request's answer budget the events are taken from. */
  readonly budget: AnswerBudget;
}

/** Conversations, tags and their links in PostgreSQL (the tracker store's tables). */
@Injectable()
export class ConversationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * One page of conversations, in one REPEATABLE READ snapshot: the page with event counts,
   * then (when events are selected) the byte size of the asked event windows, then the events.
   * The count and the size are checked against the request's answer budget before the events
   * are read, so PostgreSQL never builds, and Node never receives, more than the budget.
   */
  async rawConversations(
    filter: ConversationFilter,
    reading: PageReading,
  ): Promise<RawConversationPage> {
    const params: unknown[] = [filter.assistantId, filter.limit, filter.offset];
    if (filter.from !== null) params.push(filter.from);
    if (filter.to !== null) params.push(filter.to);
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const rows = await manager.query<Array<{ count: number; page: string }>>(
        pageSql(filter),
        params,
      );
      const row = rows[0];
      if (row === undefined) return { conversations: [], count: 0 };
      const page = JSON.parse(row.page) as Array<{
        id: string;
        eventCount: number;
        tags: ConversationTag[];
      }>;
      const conversations: RawConversation[] = page.map((c) => ({
        id: c.id,
        eventCount: c.eventCount,
        conversationEvents: [],
        tags: c.tags,
      }));
      if (!reading.events) return { count: row.count, conversations };

      const ids: string[] = [];
      const lows: number[] = [];
      const highs: number[] = [];
      let events = 0;
      for (const c of page) {
        const lo = Math.min(filter.eventOffset, c.eventCount);
        const hi =
          filter.eventLimit === null
            ? c.eventCount
            : Math.min(c.eventCount, lo + filter.eventLimit);
        ids.push(c.id);
        lows.push(lo);
        highs.push(hi);
        events += hi - lo;
      }
      reading.budget.takeEvents(events);
      if (events === 0) return { count: row.count, conversations };
      const [size] = await manager.query<Array<{ bytes: number }>>(WINDOW_BYTES_SQL, [
        ids,
        lows,
        highs,
      ]);
      reading.budget.takeBytes(size?.bytes ?? 0);
      const stored = await manager.query<Array<{ ord: number; data: string }>>(WINDOW_EVENTS_SQL, [
        ids,
        lows,
        highs,
        events,
      ]);
      for (const event of stored) {
        const conversation = conversations[event.ord - 1];
        if (conversation === undefined) continue;
        const data = JSON.parse(event.data) as Record<string, unknown>;
        conversation.conversationEvents.push(withSenderId(data, conversation.id));
      }
      return { count: row.count, conversations };
    });
  }

  /**
   * Puts a tag on a conversation; true also when it is already there. Unknown conversation,
   * unknown tag, or a tag of another assistant than the conversation's: a coded error.
   */
  async addTag(conversationId: string, tagId: string): Promise<boolean> {
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
    if (!row?.has_conversation) {
      throw new DialogueError(
        'CONVERSATIONS.CONVERSATION_NOT_FOUND',
        `Conversation "${conversationId}" does not exist.`,
        { conversationId },
      );
    }
    if (row.tag_assistant === null) {
      throw new DialogueError('CONVERSATIONS.TAG_NOT_FOUND', `Tag "${tagId}" does not exist.`, {
        tagId,
      });
    }
    if (row.tag_assistant !== row.conversation_assistant) {
      throw new DialogueError(
        'CONVERSATIONS.TAG_OF_OTHER_ASSISTANT',
        `Tag "${tagId}" belongs to assistant "${row.tag_assistant}", conversation "${conversationId}" to assistant "${row.conversation_assistant}".`,
        { conversationId, tagId },
      );
    }
    return true;
  }

  /** Takes a tag off a conversation; true whether or not it was there. */
  async removeTag(conversationId: string, tagId: string): Promise<boolean> {
    const id = tagIdOrNull(tagId);
    if (id !== null) {
      await this.dataSource.query(
        'DELETE FROM conversation_tag_link WHERE conversation_id = $1 AND tag_id = $2::uuid',
        [conversationId, id],
      );
    }
    return true;
  }

  /**
   * Deletes conversations with their events and tag links (one statement, so one transaction);
   * returns how many existed. Duplicates and unknown ids are not counted.
   */
  async deleteConversations(ids: readonly string[]): Promise<number> {
    const max = this.config.graphql.maxDeleteIds;
    if (ids.length > max) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        `conversationIds may hold at most ${max} identifiers, got ${ids.length}.`,
        { parameter: 'conversationIds', max },
      );
    }
    if (ids.length === 0) return 0;
    const result = await this.dataSource.query<[unknown[], number]>(
      'DELETE FROM conversation WHERE id = ANY($1::text[]) RETURNING id',
      [[...new Set(ids)]],
    );
    return result[1];
  }

  async tags(assistantId: string): Promise<ConversationTag[]> {
    return this.dataSource.query<ConversationTag[]>(
      `SELECT id, name, assistant_id AS "assistantId" FROM conversation_tag
       WHERE assistant_id = $1 ORDER BY name, id`,
      [assistantId],
    );
  }

  /** Creates a tag (or returns the assistant's tag of that name: idempotent). */
  async createTag(assistantId: string, name: string): Promise<ConversationTag> {
    const trimmed = name.trim();
    if (trimmed.length === 0 || trimmed.length > 100) {
      throw new DialogueError(
        'REQUEST.INVALID_PARAMETER',
        'name must hold 1 to 100 characters (surrounding spaces are trimmed).',
        { parameter: 'name' },
      );
    }
    if (assistantId.length === 0) {
      throw new DialogueError('REQUEST.INVALID_PARAMETER', 'assistantId must not be empty.', {
        parameter: 'assistantId',
      });
    }
    const rows = await this.dataSource.query<ConversationTag[]>(
      `INSERT INTO conversation_tag (assistant_id, name) VALUES ($1, $2)
       ON CONFLICT (assistant_id, name) DO UPDATE SET name = EXCLUDED.name
       RETURNING id, name, assistant_id AS "assistantId"`,
      [assistantId, trimmed],
    );
    return rows[0] as ConversationTag;
  }

  /** Deletes a tag and takes it off every conversation; true when the tag existed. */
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
