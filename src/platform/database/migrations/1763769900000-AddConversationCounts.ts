import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `conversation_count`: how many conversations each assistant has (key '' for conversations
 * without one), kept exact by triggers on `conversation` in the writing transaction — per
 * statement on insert and delete, per row on the rare update that changes `assistant_id` (the
 * `WHEN` clause keeps ordinary appends, which only move `last_seq`, from doing anything). rawConversations' `count`
 * without a time filter is then one primary-key lookup instead of counting 100,000 index entries.
 */
export class AddConversationCounts1763769900000 implements MigrationInterface {
  name = 'AddConversationCounts1763769900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_count (
        assistant_key text PRIMARY KEY,
        n bigint NOT NULL
      )`);
    // Inserts and deletes: one statement-level trigger each, over the statement's rows (a
    // batch of appends creating many conversations touches each counter row once).
    await q.query(`
      CREATE FUNCTION conversation_count_inserted() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversation_count AS c (assistant_key, n)
        SELECT COALESCE(assistant_id, ''), count(*) FROM conversation_new GROUP BY 1
        ON CONFLICT (assistant_key) DO UPDATE SET n = c.n + EXCLUDED.n;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE FUNCTION conversation_count_deleted() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversation_count AS c SET n = c.n - d.n
        FROM (SELECT COALESCE(assistant_id, '') AS key, count(*) AS n
              FROM conversation_old GROUP BY 1) AS d
        WHERE c.assistant_key = d.key;
        RETURN NULL;
      END
      $$`);
    // The first event naming an assistant moves a conversation from '' to it (row level, and
    // only when the value really changes: ordinary appends do nothing here).
    await q.query(`
      CREATE FUNCTION conversation_count_moved() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversation_count SET n = n - 1 WHERE assistant_key = COALESCE(OLD.assistant_id, '');
        INSERT INTO conversation_count AS c (assistant_key, n) VALUES (COALESCE(NEW.assistant_id, ''), 1)
        ON CONFLICT (assistant_key) DO UPDATE SET n = c.n + 1;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER conversation_count_insert AFTER INSERT ON conversation
      REFERENCING NEW TABLE AS conversation_new
      FOR EACH STATEMENT EXECUTE FUNCTION conversation_count_inserted()`);
    await q.query(`
      CREATE TRIGGER conversation_count_delete AFTER DELETE ON conversation
      REFERENCING OLD TABLE AS conversation_old
      FOR EACH STATEMENT EXECUTE FUNCTION conversation_count_deleted()`);
    await q.query(`
      CREATE TRIGGER conversation_count_update AFTER UPDATE OF assistant_id ON conversation
      FOR EACH ROW WHEN (OLD.assistant_id IS DISTINCT FROM NEW.assistant_id)
      EXECUTE FUNCTION conversation_count_moved()`);
    await q.query(`
      INSERT INTO conversation_count (assistant_key, n)
      SELECT COALESCE(assistant_id, ''), count(*) FROM conversation GROUP BY 1`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER conversation_count_update ON conversation');
    await q.query('DROP TRIGGER conversation_count_delete ON conversation');
    await q.query('DROP TRIGGER conversation_count_insert ON conversation');
    await q.query('DROP FUNCTION conversation_count_moved()');
    await q.query('DROP FUNCTION conversation_count_deleted()');
    await q.query('DROP FUNCTION conversation_count_inserted()');
    await q.query('DROP TABLE conversation_count');
  }
}
