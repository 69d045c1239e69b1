import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `conversation.generation`: a new value each time a conversation row is created (first event,
 * or again after a replace or delete). Together with `last_seq` it versions a conversation, so
 * a writer holding a cached tracker appends only if nobody else wrote in between.
 */
export class AddConversationGeneration1763769700000 implements MigrationInterface {
  name = 'AddConversationGeneration1763769700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE conversation ADD COLUMN generation uuid NOT NULL DEFAULT gen_random_uuid()',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE conversation DROP COLUMN generation');
  }
}
