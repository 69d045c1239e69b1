import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool, type PoolClient } from 'pg';
import { DialogueError, InMemoryLockStore, LockStore, NO_LEASE, type LockLease } from 'src/core';
import {
  APPLICATION_NAME,
  guardPoolConnections,
  POOL_DEFAULTS,
} from 'src/platform/database/database-errors';

/** First key of the two-key advisory lock: Parley's conversation locks. */
const LOCK_NAMESPACE = 0x5061726c; // "Parl"

/**
 * LockStore for several Parley instances on one database: a PostgreSQL session-level advisory
 * lock keyed by the conversation id. Waiters inside one process queue in memory first, so each
 * instance holds at most one database connection per busy conversation. Lock connections come
 * from their own small pool, never from the pool the work itself uses, so holding locks can
 * never starve the work of connections. Taking the lock reads the conversation's version in the
 * same round trip (the lease's `lastVersion`): a cached session at that version needs no
 * further read.
 */
export class PostgresLockStore extends LockStore implements OnApplicationShutdown {
  private readonly logger = new Logger(PostgresLockStore.name);
  private readonly local: InMemoryLockStore;
  private readonly pool: Pool;

  constructor(
    url: string,
    private readonly poolSize: number,
    private readonly lockTimeoutMs: number,
  ) {
    super();
    // Waiters of this instance queue here first: the timeout bounds that wait too, and the
    // advisory lock then gets what is left of it.
    this.local = new InMemoryLockStore({ waitTimeoutMs: lockTimeoutMs });
    this.pool = new Pool({
      ...POOL_DEFAULTS,
      connectionString: url,
      max: poolSize,
      application_name: `${APPLICATION_NAME}-locks`,
    });
    guardPoolConnections(this.pool);
    this.pool.on('error', (err) =>
      this.logger.warn({ err: err.message }, 'idle lock connection failed'),
    );
  }

  /** One connection of the lock pool per conversation held. */
  override concurrentLocks(): number {
    return this.poolSize;
  }

  withLock<T>(conversationId: string, work: (lease: LockLease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.lockTimeoutMs;
    return this.local.withLock(conversationId, () =>
      this.withAdvisoryLock(conversationId, deadline, work),
    );
  }

  private async withAdvisoryLock<T>(
    conversationId: string,
    deadline: number,
    work: (lease: LockLease) => Promise<T>,
  ): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    // A checked-out client has no listener of the pool's: without this one, a connection the
    // server terminates while the work runs would be an unhandled 'error' event.
    let lost: Error | undefined;
    const onError = (err: Error): void => {
      lost ??= err;
      this.logger.warn({ err: err.message }, 'lock connection lost while held');
    };
    client.on('error', onError);
    let locked = false;
    let failed: Error | undefined;
    let lease: LockLease = NO_LEASE;
    try {
      try {
        const left = Math.max(1, Math.floor(deadline - Date.now()));
        const id = client.escapeLiteral(conversationId);
        // One round trip: the timeout, the lock, then — a statement of its own, so its snapshot
        // is taken once the lock is held — the conversation's version, handed to the work.
        const results = (await client.query(
          `SET lock_timeout = ${left};` +
            `SELECT pg_advisory_lock(${LOCK_NAMESPACE}, hashtext(${id}));` +
            `SELECT generation, last_seq FROM conversation WHERE id = ${id}`,
        )) as unknown as Array<{ rows: Array<{ generation: string; last_seq: number }> }>;
        locked = true;
        const row = results[2]?.rows[0];
        if (row !== undefined) {
          lease = {
            lastVersion: { generation: row.generation, lastSeq: row.last_seq },
            leave: () => undefined,
          };
        }
      } catch (e) {
        if ((e as { code?: string }).code === '55P03') {
          throw new DialogueError(
            'LOCK.TIMEOUT',
            `Could not acquire the lock of conversation '${conversationId}' within ${this.lockTimeoutMs} ms.`,
          );
        }
        // Whether the lock was taken before the failure is not known: the session must end.
        failed = e instanceof Error ? e : new Error(String(e));
        throw e;
      }
      return await work(lease);
    } finally {
      let broken: Error | undefined = lost ?? failed;
      if (locked && broken === undefined) {
        try {
          await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [
            LOCK_NAMESPACE,
            conversationId,
          ]);
        } catch (err) {
          // A session that may still hold the lock must not go back to the pool: destroying it
          // ends the session, which releases every advisory lock it held.
          broken = err instanceof Error ? err : new Error(String(err));
          this.logger.warn({ err }, 'advisory unlock failed; dropping the lock connection');
        }
      }
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
