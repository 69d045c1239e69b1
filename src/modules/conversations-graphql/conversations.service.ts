import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DialogueError } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DataSource } from 'typeorm';
import { type ConversationFilter } from './conversation-filters';

export interface ConversationTag {
  id: string;
  name: string;
  assistantId: string;
}

export interface RawConversation {
  id: string;
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
 * One statement per page: the page of conversation ids comes from the index
 * `(assistant_id, started_at DESC, id)`, each conversation's events are aggregated server-side
 * into one JSON array (stored text, verbatim), and `count` is taken in the same snapshot.
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
      SELECT c.id, c.started_at FROM conversation c
      WHERE ${condition}
      ORDER BY c.started_at DESC, c.id
      LIMIT $2 OFFSET $3
    )
    SELECT ${countSql},
      (SELECT COALESCE(json_agg(json_build_object(
          'id', p.id,
          'events', COALESCE((SELECT json_agg(e.data ORDER BY e.seq) FROM conversation_event e
                              WHERE e.conversation_id = p.id), '[]'::json),
          'tags', COALESCE((SELECT json_agg(json_build_object('id', t.id, 'name', t.name,
                                    'assistantId', t.assistant_id) ORDER BY t.name, t.id)
                            FROM conversation_tag_link l JOIN conversation_tag t ON t.id = l.tag_id
                            WHERE l.conversation_id = p.id), '[]'::json)
        ) ORDER BY p.started_at DESC, p.id), '[]'::json) FROM page p)::text AS page`;
}

/** Conversations, tags and their links in PostgreSQL (the tracker store's tables). */
@Injectable()
export class ConversationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async rawConversations(filter: ConversationFilter): Promise<RawConversationPage> {
    const params: unknown[] = [filter.assistantId, filter.limit, filter.offset];
    if (filter.from !== null) params.push(filter.from);
    if (filter.to !== null) params.push(filter.to);
    const rows = await this.dataSource.query<Array<{ count: number; page: string }>>(
      pageSql(filter),
      params,
    );
    const row = rows[0];
    if (row === undefined) return { conversations: [], count: 0 };
    const page = JSON.parse(row.page) as Array<{
      id: string;
      events: Array<Record<string, unknown>>;
      tags: ConversationTag[];
    }>;
    return {
      count: row.count,
      conversations: page.map((c) => ({
        id: c.id,
        conversationEvents: c.events.map((e) => withSenderId(e, c.id)),
        tags: c.tags,
      })),
    };
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
