import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `event_outbox.traceparent`: the W3C `traceparent` of the turn that wrote the row, when the
 * turn was traced, so the relay's publish span links back to the turn's trace. Nullable: rows
 * of untraced turns, of appends outside a turn and of earlier versions carry none.
 */
export class AddOutboxTraceparent1763770600000 implements MigrationInterface {
  name = 'AddOutboxTraceparent1763770600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE event_outbox ADD COLUMN traceparent text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE event_outbox DROP COLUMN traceparent');
  }
}
