import { randomUUID } from 'node:crypto';
import {
  type ClaimedReminder,
  entitiesKey,
  type JsonObject,
  type ReminderMatch,
  type ReminderRecord,
  ReminderStore,
} from 'src/core';

/** The part of pg's Pool (or Client) the store uses. */
export interface PgQueryable {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** Milliseconds since the epoch as a timestamptz parameter. */
const TS = (param: string): string => `to_timestamp(${param}::float8 / 1000)`;
const MS = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

const SCHEDULE = `
  INSERT INTO reminder (conversation_id, name, intent, entities, entities_key, trigger_at,
    kill_on_user_msg, scheduled_at, output_channel, status, due_at)
  VALUES ($1, $2, $3, $4::jsonb, $5, ${TS('$6')}, $7, $8, $9, 'pending', ${TS('$6')})
  ON CONFLICT (conversation_id, name) DO UPDATE SET
    intent = EXCLUDED.intent, entities = EXCLUDED.entities, entities_key = EXCLUDED.entities_key,
    trigger_at = EXCLUDED.trigger_at, kill_on_user_msg = EXCLUDED.kill_on_user_msg,
    scheduled_at = EXCLUDED.scheduled_at, output_channel = EXCLUDED.output_channel,
    status = 'pending', due_at = EXCLUDED.due_at, claim_token = NULL, claimed_at = NULL,
    attempts = 0, created_at = now()`;

/**
 * One statement, one short transaction: locks the due rows no other claimer holds
 * (SKIP LOCKED: concurrent instances take disjoint rows and never wait for each other) and
 * marks them claimed until the lease ends.
 */
const CLAIM = `
  WITH due AS (
    SELECT conversation_id, name FROM reminder
    WHERE due_at <= ${TS('$1')}
    ORDER BY due_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  UPDATE reminder r SET status = 'claimed', claim_token = $4::uuid, claimed_at = ${TS('$1')},
    due_at = ${TS('($1::float8 + $3::float8)')}, attempts = r.attempts + 1
  FROM due WHERE r.conversation_id = due.conversation_id AND r.name = due.name
  RETURNING r.conversation_id, r.name, r.intent, r.entities, ${MS('r.trigger_at')} AS trigger_at,
    r.kill_on_user_msg, r.scheduled_at, r.output_channel, r.attempts`;

interface ClaimRow {
  conversation_id: string;
  name: string;
  intent: string;
  entities: JsonObject[];
  trigger_at: number;
  kill_on_user_msg: boolean;
  scheduled_at: number;
  output_channel: string | null;
  attempts: number;
}

/**
 * ReminderStore on PostgreSQL (table `reminder`): every instance on the database sees every
 * reminder; a due reminder is claimed by one of them with `FOR UPDATE SKIP LOCKED`, as a lease
 * (`due_at` moves to the lease's end), and deleted once fired.
 */
export class PostgresReminderStore extends ReminderStore {
  constructor(private readonly db: PgQueryable) {
    super();
  }

  async schedule(r: ReminderRecord): Promise<void> {
    await this.db.query(SCHEDULE, [
      r.conversationId,
      r.name,
      r.intent,
      JSON.stringify(r.entities),
      entitiesKey(r.entities),
      r.triggerAt,
      r.killOnUserMessage,
      r.scheduledAt,
      r.outputChannel,
    ]);
  }

  async cancel(conversationId: string, match: ReminderMatch): Promise<number> {
    const result =
      match.name !== null
        ? await this.db.query('DELETE FROM reminder WHERE conversation_id = $1 AND name = $2', [
            conversationId,
            match.name,
          ])
        : await this.db.query(
            `DELETE FROM reminder WHERE conversation_id = $1
               AND ($2::text IS NULL OR intent = $2) AND ($3::text IS NULL OR entities_key = $3)`,
            [
              conversationId,
              match.intent,
              match.entities === null ? null : entitiesKey(match.entities),
            ],
          );
    return result.rowCount ?? 0;
  }

  async claimDue(nowMs: number, limit: number, leaseMs: number): Promise<ClaimedReminder[]> {
    const claim = randomUUID();
    const { rows } = await this.db.query<ClaimRow>(CLAIM, [nowMs, limit, leaseMs, claim]);
    return rows.map((row) => ({
      conversationId: row.conversation_id,
      name: row.name,
      intent: row.intent,
      entities: row.entities,
      triggerAt: row.trigger_at,
      killOnUserMessage: row.kill_on_user_msg,
      scheduledAt: row.scheduled_at,
      outputChannel: row.output_channel,
      claim,
      attempts: row.attempts,
    }));
  }

  /** One statement for every reminder this instance fires, each found by its primary key. */
  async renew(
    reminders: readonly ClaimedReminder[],
    nowMs: number,
    leaseMs: number,
  ): Promise<void> {
    if (reminders.length === 0) return;
    await this.db.query(
      `UPDATE reminder r SET due_at = ${TS('($4::float8 + $5::float8)')}
       FROM unnest($1::text[], $2::text[], $3::uuid[]) AS held(conversation_id, name, claim)
       WHERE r.conversation_id = held.conversation_id AND r.name = held.name
         AND r.claim_token = held.claim`,
      [
        reminders.map((r) => r.conversationId),
        reminders.map((r) => r.name),
        reminders.map((r) => r.claim),
        nowMs,
        leaseMs,
      ],
    );
  }

  async complete(r: ClaimedReminder): Promise<void> {
    await this.db.query(
      'DELETE FROM reminder WHERE conversation_id = $1 AND name = $2 AND claim_token = $3::uuid',
      [r.conversationId, r.name, r.claim],
    );
  }

  async retry(r: ClaimedReminder, atMs: number): Promise<void> {
    await this.db.query(
      `UPDATE reminder SET status = 'pending', due_at = ${TS('$4')}, claim_token = NULL,
         claimed_at = NULL
       WHERE conversation_id = $1 AND name = $2 AND claim_token = $3::uuid`,
      [r.conversationId, r.name, r.claim, atMs],
    );
  }

  async dueCount(nowMs: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reminder WHERE status = 'claimed' OR due_at <= ${TS('$1')}`,
      [nowMs],
    );
    return rows[0]?.n ?? 0;
  }
}
