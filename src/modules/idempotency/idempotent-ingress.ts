import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { DialogueError } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { ApiError } from 'src/platform/errors/api-error';
import { IdempotencyStore, type KeyScope, type StoredAnswer } from './idempotency-store';

/** Longest idempotency key or `message_id`. */
export const MAX_KEY_LENGTH = 255;

/**
 * How long a claim is held without an answer before another request may take it over (the
 * server that claimed it is presumed dead). Longer than any turn: the lock lease and the action
 * server timeouts are far shorter.
 */
export const IN_FLIGHT_LEASE_MS = 5 * 60_000;

const PRINTABLE = /^[\x20-\x7e]+$/;

/** Who sends on which route: the scope of a key (two senders never share a key). */
export interface IngressScope {
  /** The channel name (`rest`, `callback`, a custom name) or `conversations`. */
  readonly scope: string;
  readonly sender: string;
}

/**
 * The `message_id` of a message body: a string of 1–255 characters without control characters;
 * absent/null → null; anything else is a 400 naming the field.
 */
export function messageIdOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const value = (body as Record<string, unknown>).message_id;
  if (value === undefined || value === null) return null;
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > MAX_KEY_LENGTH ||
    // eslint-disable-next-line no-control-regex
    /[\x00-\x1f\x7f]/.test(value)
  ) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `"message_id" must be a string of 1 to ${MAX_KEY_LENGTH} characters without control characters.`,
      { parameter: 'message_id', in: 'body' },
    );
  }
  return value;
}

/**
 * The `Idempotency-Key` header (the draft defines it as a structured-field string, so a quoted
 * value is unquoted; a bare token is accepted too): 1–255 printable ASCII characters, else 400.
 */
export function idempotencyKeyOf(req: Request): string | null {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return null;
  let value = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    value = value.slice(1, -1).replace(/\\(["\\])/g, '$1');
  }
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !PRINTABLE.test(value)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `The Idempotency-Key header must hold 1 to ${MAX_KEY_LENGTH} printable ASCII characters.`,
      { parameter: 'Idempotency-Key', in: 'header' },
    );
  }
  return value;
}

/** JSON with object keys sorted (bodies are at most 64 levels deep: the body parser checks). */
function canonical(value: unknown): string {
  // A connector's raw (signed) body: its bytes as they are, hashed in one piece.
  if (Buffer.isBuffer(value)) return `raw:${value.toString('base64')}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map(
        (k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k] ?? null)}`,
      );
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The request's payload fingerprint: method, path, query and body (key order ignored). */
export function fingerprintOf(req: Request): string {
  return createHash('sha256')
    .update(`${req.method} ${req.path}\n${canonical(req.query)}\n${canonical(req.body)}`)
    .digest('hex');
}

/**
 * Idempotent ingress of the message routes (draft-ietf-httpapi-idempotency-key-header): a request
 * with an `Idempotency-Key` header (or, without one, a `message_id` in its body) runs once per
 * key, route and sender. Its answer is stored and replayed to a repeat with the same payload
 * (same status, content type and body, plus `Idempotent-Replayed: true`); a repeat while the
 * first is still running gets 409 with Retry-After; the same key with a different payload 422.
 * A request that fails (the turn was not stored) gives its key up, so a retry runs. Keys are
 * kept for IDEMPOTENCY_RETENTION_SECONDS (24 h) and then swept.
 */
@Injectable()
export class IdempotentIngress {
  private readonly log = new Logger('Idempotency');
  private readonly retentionMs: number;

  constructor(
    private readonly store: IdempotencyStore,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.retentionMs = config.idempotency.retentionMs;
  }

  /**
   * Runs `work` (which answers through `res`) once per key. `messageId` is the body's
   * `message_id`, already read by the caller; the header wins as the key when both are given.
   */
  async run(
    req: Request,
    res: Response,
    scope: IngressScope,
    messageId: string | null,
    work: () => Promise<void>,
  ): Promise<void> {
    const key = idempotencyKeyOf(req) ?? messageId;
    if (key === null) return work();
    const at: KeyScope = { scope: scope.scope, sender: scope.sender, key };
    const claim = await this.store.claim(
      at,
      fingerprintOf(req),
      this.retentionMs,
      IN_FLIGHT_LEASE_MS,
    );
    switch (claim.kind) {
      case 'in_flight':
        throw new ApiError(
          'IDEMPOTENCY.IN_FLIGHT',
          'A request with this idempotency key is still being processed; retry later.',
          { key },
          { 'Retry-After': '1' },
        );
      case 'mismatch':
        throw new ApiError(
          'IDEMPOTENCY.KEY_REUSED',
          'This idempotency key was used for a request with a different payload.',
          { key },
        );
      case 'replay':
        replay(res, claim.answer);
        return;
      case 'claimed':
        break;
    }
    const owner = claim.owner;
    const captured = captureAnswer(res, async (answer) => {
      try {
        if (answer.status >= 500) await this.store.release(at, owner);
        else await this.store.complete(at, owner, answer);
      } catch (e) {
        // The client still gets its answer; the key stays claimed until its lease runs out.
        this.log.warn({ err: (e as Error).message, scope: at.scope }, 'idempotency key not stored');
      }
    });
    try {
      await work();
    } catch (e) {
      captured.abandon();
      await this.store.release(at, owner).catch(() => undefined);
      throw e;
    }
  }
}

function replay(res: Response, answer: StoredAnswer): void {
  res.status(answer.status);
  if (answer.contentType !== null) res.setHeader('content-type', answer.contentType);
  res.setHeader('Idempotent-Replayed', 'true');
  res.setHeader('content-length', answer.body.length);
  res.end(answer.body);
}

type Chunk = string | Buffer | Uint8Array;

function toBuffer(chunk: Chunk, encoding: unknown): Buffer {
  if (typeof chunk === 'string') {
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  }
  return Buffer.from(chunk);
}

/**
 * Records what `res` sends (status, content type, body) and, when the handler ends it, hands
 * the answer to `onEnd` before the response is finished — so once a client holds the first
 * answer, a replay finds it stored. `abandon()` stops recording (the handler failed: the error
 * answer is not stored).
 */
function captureAnswer(
  res: Response,
  onEnd: (answer: StoredAnswer) => Promise<void>,
): { abandon(): void } {
  const chunks: Buffer[] = [];
  let active = true;
  let headType: string | null = null;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
  res.writeHead = ((...args: unknown[]) => {
    const headers = args.find((a) => typeof a === 'object' && a !== null && !Array.isArray(a));
    if (active && headers !== undefined) {
      for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
        if (k.toLowerCase() === 'content-type') headType = String(v);
      }
    }
    return writeHead(...args);
  }) as Response['writeHead'];
  res.write = ((...args: unknown[]) => {
    const chunk = args[0] as Chunk | undefined;
    if (active && chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, args[1]));
    return write(...args);
  }) as Response['write'];
  res.end = ((...args: unknown[]) => {
    if (!active) return end(...args);
    active = false;
    const chunk = args[0];
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
      chunks.push(toBuffer(chunk as Chunk, args[1]));
    }
    const type = res.getHeader('content-type');
    const answer: StoredAnswer = {
      status: res.statusCode,
      contentType: headType ?? (type === undefined ? null : String(type)),
      body: Buffer.concat(chunks),
    };
    void onEnd(answer).finally(() => end(...args));
    return res;
  }) as Response['end'];
  return {
    abandon(): void {
      active = false;
    },
  };
}
