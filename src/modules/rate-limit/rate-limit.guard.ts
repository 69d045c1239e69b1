import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { ApiError } from 'src/platform/errors/api-error';
import { conversationIdOf } from 'src/platform/http/conversation-id';

/** The routes that are limited: the channel webhooks and the conversation routes. */
const LIMITED = /^\/webhooks\/[^/]+\/webhook\/?$|^\/conversations\//;

export function isLimitedRoute(path: string): boolean {
  return LIMITED.test(path);
}

/**
 * Who a request counts against for the per-client limit: the authenticated token's subject
 * when the auth guard verified one (`sub`, else Rasa's `user.username`), else the client's
 * address (`req.ip`, which honours TRUST_PROXY).
 */
export function clientOf(req: Request): string {
  const user = (req as Request & { user?: { sub?: unknown; user?: { username?: unknown } } }).user;
  const subject = user?.sub ?? user?.user?.username;
  if (typeof subject === 'string' && subject.length > 0) return `sub:${subject}`;
  return `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/**
 * The conversation a request sends to, for the per-conversation limit: the webhook body's
 * `sender` (scoped by channel) or the conversation id of a `/conversations/<id>/…` path; null
 * when there is none (that limit then does not apply).
 */
export function conversationOf(req: Request): string | null {
  const hook = /^\/webhooks\/([^/]+)\/webhook\/?$/.exec(req.path);
  if (hook) {
    const body = req.body as unknown;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
    const sender = (body as Record<string, unknown>).sender;
    if (typeof sender !== 'string' && typeof sender !== 'number') return null;
    return `${hook[1]}:${String(sender)}`;
  }
  const id = conversationIdOf(req);
  return id === null ? null : `conversations:${id}`;
}

/**
 * `@nestjs/throttler`'s guard, limited to the message routes (health, metrics and every other
 * route pass untouched), with keys shared by every route (`<prefix><throttler>:<sha256>`: one
 * budget per client / conversation, in one Redis for every instance), and Parley's 429 failure
 * body with `Retry-After` and `X-RateLimit-*` headers.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly prefix: string;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(options, storage, reflector);
    this.prefix = config.rateLimit.prefix;
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    return Promise.resolve(!isLimitedRoute(req.path));
  }

  protected override generateKey(
    _context: ExecutionContext,
    tracker: string,
    name: string,
  ): string {
    return `${this.prefix}${name}:${createHash('sha256').update(tracker).digest('hex')}`;
  }

  protected override throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const retryAfter = String(Math.max(1, detail.timeToBlockExpire));
    throw new ApiError(
      'HTTP.TOO_MANY_REQUESTS',
      `Too many requests: at most ${detail.limit} per ${detail.ttl / 1000} s. Retry after ${retryAfter} s.`,
      { limit: detail.limit, window_ms: detail.ttl, retry_after: Number(retryAfter) },
      {
        'Retry-After': retryAfter,
        'X-RateLimit-Limit': String(detail.limit),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': retryAfter,
      },
    );
  }
}
