import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Conversation management (GraphQL API):
 *
 * - `conversation.assistant_id`: the `metadata.assistant_id` of the conversation's first event
 *   that carries one (stamped by the dialogue server), written by the same statement that
 *   appends the events. Pages of one assistant's conversations, newest start first, are read
 *   from the index `(assistant_id, started_at DESC, id)`; `started_at` is the timestamp of the
 *   conversation's first event.
 * - `conversation_tag`: tags of an assistant, unique by name per assistant.
 * - `conversation_tag_link`: which tag is on which conversation; both sides cascade, so deleting
 *   a conversation (or a tag) removes its links in the same statement.
 */
export class AddConversationAssistantAndTags1763769800000 implements MigrationInterface {
  name = 'AddConversationAssistantAndTags1763769800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE conversation ADD COLUMN assistant_id text');
    await q.query(`
      UPDATE conversation c SET assistant_id = (
        SELECT e.data -> 'metadata' ->> 'assistant_id' FROM conversation_event e
        WHERE e.conversation_id = c.id AND e.data -> 'metadata' ->> 'assistant_id' IS NOT NULL
        ORDER BY e.seq LIMIT 1)`);
    await q.query(
      'CREATE INDEX conversation_assistant_started_idx ON conversation (assistant_id, started_at DESC, id)',
    );
    await q.query(`
      CREATE TABLE conversation_tag (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        assistant_id text NOT NULL,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT conversation_tag_assistant_name_key UNIQUE (assistant_id, name)
      )`);
    await q.query(`
      CREATE TABLE conversation_tag_link (
        conversation_id text NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
        tag_id uuid NOT NULL REFERENCES conversation_tag (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (conversation_id, tag_id)
      )`);
    await q.query('CREATE INDEX conversation_tag_link_tag_idx ON conversation_tag_link (tag_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE conversation_tag_link');
    await q.query('DROP TABLE conversation_tag');
    await q.query('ALTER TABLE conversation DROP COLUMN assistant_id');
  }
}
