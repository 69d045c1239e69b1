import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `conversation_count`: how many conversations each assistant has (key '' for conversations
 * without one), kept exact by row triggers on `conversation` in the writing transaction — on
 * insert, on delete, and on the rare update that changes `assistant_id` (the `WHEN` clause keeps
 * ordinary appends, which only move `last_seq`, from doing anything). rawConversations' `count`
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
    await q.query(`
      CREATE FUNCTION conversation_count_add(key text, delta int) RETURNS void
      LANGUAGE sql AS $$
        INSERT INTO conversation_count AS c (assistant_key, n) VALUES (key, delta)
        ON CONFLICT (assistant_key) DO UPDATE SET n = c.n + EXCLUDED.n
      $$`);
    await q.query(`
      CREATE FUNCTION conversation_count_trigger() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          PERFORM conversation_count_add(COALESCE(OLD.assistant_id, ''), -1);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          PERFORM conversation_count_add(COALESCE(NEW.assistant_id, ''), 1);
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER conversation_count_insert AFTER INSERT ON conversation
      FOR EACH ROW EXECUTE FUNCTION conversation_count_trigger()`);
    await q.query(`
      CREATE TRIGGER conversation_count_delete AFTER DELETE ON conversation
      FOR EACH ROW EXECUTE FUNCTION conversation_count_trigger()`);
    await q.query(`
      CREATE TRIGGER conversation_count_update AFTER UPDATE OF assistant_id ON conversation
      FOR EACH ROW WHEN (OLD.assistant_id IS DISTINCT FROM NEW.assistant_id)
      EXECUTE FUNCTION conversation_count_trigger()`);
    await q.query(`
      INSERT INTO conversation_count (assistant_key, n)
      SELECT COALESCE(assistant_id, ''), count(*) FROM conversation GROUP BY 1`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER conversation_count_update ON conversation');
    await q.query('DROP TRIGGER conversation_count_delete ON conversation');
    await q.query('DROP TRIGGER conversation_count_insert ON conversation');
    await q.query('DROP FUNCTION conversation_count_trigger()');
    await q.query('DROP FUNCTION conversation_count_add(text, int)');
    await q.query('DROP TABLE conversation_count');
  }
}
