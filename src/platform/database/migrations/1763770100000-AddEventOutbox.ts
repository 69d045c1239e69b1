import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `event_outbox`: the transactional outbox of the event broker. When a broker is configured,
 * the statement that appends a turn's events also inserts ONE row here naming the appended range
 * `(conversation_id, first_seq, last_seq)` — not a copy of the events: the relay reads them from
 * `conversation_event` by range, publishes them, and deletes the row once the broker confirmed.
 * Without a broker nothing writes here. `id` orders the rows (oldest turn first); the
 * `(conversation_id, id)` index lets the relay check that no earlier row of a conversation is
 * still held by another instance, so a conversation's events go out in `seq` order.
 */
export class AddEventOutbox1763770100000 implements MigrationInterface {
  name = 'AddEventOutbox1763770100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_outbox (
        id bigserial PRIMARY KEY,
        conversation_id text NOT NULL,
        first_seq int NOT NULL,
        last_seq int NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      'CREATE INDEX event_outbox_conversation_idx ON event_outbox (conversation_id, id)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE event_outbox');
  }
}
