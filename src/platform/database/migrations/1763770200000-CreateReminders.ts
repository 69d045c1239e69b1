import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The reminders of every conversation (ReminderStore), shared by all instances. One row per
 * conversation and reminder name (Rasa's job id: the same name replaces the row). `due_at` is
 * when a poller may claim the row: the trigger time while `pending`, the end of the claim's
 * lease while `claimed` — so one index serves both the first claim and the re-claim of a
 * reminder whose instance died.
 */
export class CreateReminders1763770200000 implements MigrationInterface {
  name = 'CreateReminders1763770200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reminder (
        conversation_id text NOT NULL,
        name text NOT NULL,
        intent text NOT NULL,
        entities jsonb NOT NULL,
        entities_key text NOT NULL,
        trigger_at timestamptz NOT NULL,
        kill_on_user_msg boolean NOT NULL,
        scheduled_at double precision NOT NULL,
        output_channel text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'claimed')),
        due_at timestamptz NOT NULL,
        claim_token uuid,
        claimed_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (conversation_id, name)
      )`);
    await q.query('CREATE INDEX reminder_due_at_idx ON reminder (due_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE reminder');
  }
}
