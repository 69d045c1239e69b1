import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * `idempotency_key`: one row per `Idempotency-Key` (or body `message_id`) of the message routes,
 * scoped by route (channel name, or `conversations`) and sender so two users never share a key.
 * A row is claimed in flight (`owner` set, `answer_status` null) by the request that runs, then
 * holds that request's answer for replay until `expires_at`; a swept row is gone.
 * `lease_until` lets a later request take over a claim whose server died mid-request.
 */
export class CreateIdempotencyKeys1763770500000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1763770500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_key (
        scope text NOT NULL,
        sender text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        owner uuid NOT NULL,
        answer_status integer,
        answer_type text,
        answer_body bytea,
        created_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (scope, sender, key)
      )`);
    await q.query(`CREATE INDEX idempotency_key_expires_at ON idempotency_key (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_key`);
  }
}
