import { Pool } from 'pg';
import { type SqlBrokerConfig } from 'src/modules/engine';
import { type BrokerMessage } from 'src/modules/event-broker/wire';
import { EventBroker } from './event-broker';

/**
 * Rasa's `SQLEventBroker`: every event as a row of `events(id, sender_id, data)` (`data` the
 * flat JSON), on PostgreSQL. One multi-row INSERT per relay batch: committed means confirmed.
 * Never Parley's own tracker database (refused at start, see createBroker).
 */
export class SqlBroker extends EventBroker {
  readonly name = 'sql';
  private pool: Pool | null = null;
  private created = false;

  constructor(private readonly config: SqlBrokerConfig) {
    super();
  }

  get target(): string {
    return this.config.safeUrl;
  }

  private getPool(): Pool {
    this.pool ??= new Pool({
      connectionString: this.config.url,
      max: 2,
      connectionTimeoutMillis: 5_000,
    });
    this.pool.on('error', () => undefined);
    return this.pool;
  }

  async connect(): Promise<void> {
    if (this.created) return;
    await this.getPool().query(
      'CREATE TABLE IF NOT EXISTS events (id serial PRIMARY KEY, sender_id varchar(255), data text)',
    );
    this.created = true;
  }

  async publish(messages: readonly BrokerMessage[]): Promise<void> {
    await this.connect();
    await this.getPool().query(
      'INSERT INTO events (sender_id, data) SELECT * FROM unnest($1::text[], $2::text[])',
      [messages.map((m) => m.conversationId), messages.map((m) => m.body)],
    );
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => undefined);
  }
}
