import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The append-only event log and one row per conversation.
 *
 * - `conversation_event.data` is `json`, not `jsonb`: `json` keeps the text as written, so events
 *   come back with the exact key order Rasa emits; the columns beside it (type, intent, action,
 *   timestamp) carry what queries filter on.
 * - `(conversation_id, seq)` is unique, so two writers can never both append the same position.
 * - `conversation.last_seq` hands out positions: appends do one upsert on that row, which also
 *   serialises concurrent writers of the same conversation at the row lock.
 * - `conversation.session_start_seq` points at the latest `action_session_start`, so the latest
 *   session is read with one index range scan.
 */
export class CreateConversationEvents1763769600000 implements MigrationInterface {
  name = 'CreateConversationEvents1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation (
        id text PRIMARY KEY,
        started_at double precision NOT NULL,
        latest_event_time double precision NOT NULL,
        last_seq integer NOT NULL,
        session_start_seq integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX conversation_started_at_idx ON conversation (started_at DESC, id)`);
    await q.query(`
      CREATE TABLE conversation_event (
        id bigserial PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        type_name text NOT NULL,
        "timestamp" double precision NOT NULL,
        intent_name text,
        action_name text,
        data json NOT NULL,
        CONSTRAINT conversation_event_conversation_seq_key UNIQUE (conversation_id, seq)
      )`);
    await q.query(
      `CREATE INDEX conversation_event_timestamp_idx ON conversation_event ("timestamp")`,
    );
    await q.query(
      `CREATE INDEX conversation_event_type_idx ON conversation_event (type_name, intent_name, action_name)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE conversation_event');
    await q.query('DROP TABLE conversation');
  }
}
