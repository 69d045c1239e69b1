import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';

/** Where a key is kept: the route (channel name or `conversations`) and the sender. */
export interface KeyScope {
  readonly scope: string;
  readonly sender: string;
  readonly key: string;
}

/** A stored answer, replayed byte for byte. */
export interface StoredAnswer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: Buffer;
}

/** What claiming a key found. */
export type Claim =
  | { readonly kind: 'claimed'; readonly owner: string }
  | { readonly kind: 'in_flight' }
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'replay'; readonly answer: StoredAnswer };

interface Row {
  fingerprint: string;
  answer_status: number | null;
  answer_type: string | null;
  answer_body: Buffer | null;
}

/**
 * Idempotency keys in PostgreSQL (table `idempotency_key`): claimed by one insert that either
 * creates the row or takes over an expired one (or a claim whose lease ran out: its server died
 * mid-request); whoever finds the row instead reads it. Every instance of the service shares
 * the table, so a retry that lands on another instance is still recognised.
 */
@Injectable()
export class IdempotencyStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async claim(
    at: KeyScope,
    fingerprint: string,
    retentionMs: number,
    leaseMs: number,
  ): Promise<Claim> {
    // A row deleted between the insert and the read (its request failed) is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const owner = randomUUID();
      const claimed = await this.dataSource.query<{ owner: string }[]>(
        `INSERT INTO idempotency_key AS k
           (scope, sender, key, fingerprint, owner, lease_until, expires_at)
         VALUES ($1, $2, $3, $4, $5,
                 now() + $6 * interval '1 millisecond', now() + $7 * interval '1 millisecond')
         ON CONFLICT (scope, sender, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner,
               answer_status = NULL, answer_type = NULL, answer_body = NULL,
               created_at = now(), lease_until = EXCLUDED.lease_until,
               expires_at = EXCLUDED.expires_at
           WHERE k.expires_at <= now() OR (k.answer_status IS NULL AND k.lease_until <= now())
         RETURNING owner`,
        [at.scope, at.sender, at.key, fingerprint, owner, leaseMs, retentionMs],
      );
      if (claimed.length > 0) return { kind: 'claimed', owner };
      const rows = await this.dataSource.query<Row[]>(
        `SELECT fingerprint, answer_status, answer_type, answer_body FROM idempotency_key
          WHERE scope = $1 AND sender = $2 AND key = $3`,
        [at.scope, at.sender, at.key],
      );
      const row = rows[0];
      if (row === undefined) continue;
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (row.answer_status === null) return { kind: 'in_flight' };
      return {
        kind: 'replay',
        answer: {
          status: row.answer_status,
          contentType: row.answer_type,
          body: row.answer_body ?? Buffer.alloc(0),
        },
      };
    }
    return { kind: 'in_flight' };
  }

  /** Stores the answer of the request that claimed the key (only while it still owns it). */
  async complete(at: KeyScope, owner: string, answer: StoredAnswer): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_key SET answer_status = $5, answer_type = $6, answer_body = $7
        WHERE scope = $1 AND sender = $2 AND key = $3 AND owner = $4`,
      [at.scope, at.sender, at.key, owner, answer.status, answer.contentType, answer.body],
    );
  }

  /** Gives a claim up (its request failed and stored nothing): a retry runs again. */
  async release(at: KeyScope, owner: string): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_key
        WHERE scope = $1 AND sender = $2 AND key = $3 AND owner = $4 AND answer_status IS NULL`,
      [at.scope, at.sender, at.key, owner],
    );
  }

  /** Deletes expired keys; returns how many. */
  async sweep(): Promise<number> {
    const result = await this.dataSource.query<[unknown[], number]>(
      `DELETE FROM idempotency_key WHERE expires_at <= now()`,
    );
    return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
  }
}
