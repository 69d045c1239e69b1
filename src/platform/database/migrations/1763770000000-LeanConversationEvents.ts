import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Makes each stored event cheaper to write — every turn inserts several:
 * - the primary key is `(conversation_id, seq)` (the unique constraint it replaces), and the
 *   surrogate `id bigserial` goes: nothing reads it, and it cost a sequence step and a second
 *   index per event;
 * - the `"timestamp"` and `(type_name, intent_name, action_name)` indexes go: no query of
 *   Parley's uses them (Rasa's own SQL store indexes only the sender id); the columns stay for
 *   operators' queries, who can index what they need;
 * - the foreign key to `conversation` becomes a statement-level trigger that deletes a deleted
 *   conversation's events. The key checked every inserted event with a per-row trigger, although
 *   each append inserts its events in the statement that creates or moves its conversation
 *   row. Deleting conversations (tracker route, GraphQL, replace) behaves as before.
 */
export class LeanConversationEvents1763770000000 implements MigrationInterface {
  name = 'LeanConversationEvents1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION conversation_events_deleted() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM conversation_event e USING conversation_gone g WHERE e.conversation_id = g.id;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER conversation_events_delete AFTER DELETE ON conversation
      REFERENCING OLD TABLE AS conversation_gone
      FOR EACH STATEMENT EXECUTE FUNCTION conversation_events_deleted()`);
    await q.query(
      'ALTER TABLE conversation_event DROP CONSTRAINT conversation_event_conversation_id_fkey',
    );
    await q.query('DROP INDEX conversation_event_timestamp_idx');
    await q.query('DROP INDEX conversation_event_type_idx');
    await q.query('ALTER TABLE conversation_event DROP CONSTRAINT conversation_event_pkey');
    await q.query('ALTER TABLE conversation_event DROP COLUMN id');
    await q.query(`
      ALTER TABLE conversation_event
        DROP CONSTRAINT conversation_event_conversation_seq_key,
        ADD CONSTRAINT conversation_event_pkey PRIMARY KEY (conversation_id, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE conversation_event DROP CONSTRAINT conversation_event_pkey');
    await q.query(`
      ALTER TABLE conversation_event ADD CONSTRAINT conversation_event_conversation_seq_key
      UNIQUE (conversation_id, seq)`);
    await q.query('ALTER TABLE conversation_event ADD COLUMN id bigserial PRIMARY KEY');
    await q.query(
      `CREATE INDEX conversation_event_timestamp_idx ON conversation_event ("timestamp")`,
    );
    await q.query(
      `CREATE INDEX conversation_event_type_idx ON conversation_event (type_name, intent_name, action_name)`,
    );
    await q.query(`
      ALTER TABLE conversation_event ADD CONSTRAINT conversation_event_conversation_id_fkey
      FOREIGN KEY (conversation_id) REFERENCES conversation (id) ON DELETE CASCADE`);
    await q.query('DROP TRIGGER conversation_events_delete ON conversation');
    await q.query('DROP FUNCTION conversation_events_deleted()');
  }
}
