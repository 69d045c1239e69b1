import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `parley_lock_conversation(namespace, id, timeout_ms)`: the PostgreSQL lock store's acquisition
 * as one prepared call instead of a three-statement text query (the timeout, the advisory lock,
 * the conversation's version). A VOLATILE PL/pgSQL function reads the version with a snapshot
 * taken after the lock is held, as the separate statement did; the timeout is set for the
 * session, as `SET lock_timeout` did. Parsed and planned once per connection, it costs the
 * database about half the CPU of the text query.
 */
export class AddConversationLockFunction1763770700000 implements MigrationInterface {
  name = 'AddConversationLockFunction1763770700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION parley_lock_conversation(
        namespace integer, conversation_id text, timeout_ms integer
      ) RETURNS TABLE (generation uuid, last_seq integer)
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM set_config('lock_timeout', timeout_ms::text, false);
        PERFORM pg_advisory_lock(namespace, hashtext(conversation_id));
        RETURN QUERY SELECT c.generation, c.last_seq FROM conversation c WHERE c.id = conversation_id;
      END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION IF EXISTS parley_lock_conversation(integer, text, integer)');
  }
}
