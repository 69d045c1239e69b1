import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import { Logger, Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  ThrottlerModule,
  ThrottlerStorageService,
  type ThrottlerOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request } from 'express';
import { Redis } from 'ioredis';
import { type AppConfig } from 'src/platform/config/app-config';
import { redactUrl } from 'src/platform/logging/redact';
import { FailOpenStorage } from './fail-open-storage';
import { clientOf, conversationOf, RateLimitGuard } from './rate-limit.guard';

/** How long the start waits for Redis before serving with fail-open counters. */
const REDIS_READY_TIMEOUT_MS = 5_000;

/**
 * Rate limits of the message routes (`@nestjs/throttler`): `client` — requests per client (token
 * subject, else address) — and `conversation` — messages per sender / conversation id — each per
 * RATE_LIMIT_WINDOW_MS. Counters live in Redis (REDIS_URL: every instance shares them) or, without
 * it, in this process. Both limits 0 (the default): the module adds nothing.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    const { perClient, perConversation, windowMs, redisUrl } = config.rateLimit;
    if (perClient === 0 && perConversation === 0) return { module: RateLimitModule };
    const throttlers: ThrottlerOptions[] = [];
    if (perClient > 0) {
      throttlers.push({
        name: 'client',
        ttl: windowMs,
        limit: perClient,
        getTracker: (req) => clientOf(req as Request),
      });
    }
    if (perConversation > 0) {
      throttlers.push({
        name: 'conversation',
        ttl: windowMs,
        limit: perConversation,
        getTracker: (req) => conversationOf(req as Request) ?? '',
        skipIf: (context) => conversationOf(context.switchToHttp().getRequest<Request>()) === null,
      });
    }
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          useFactory: async () => ({
            throttlers,
            storage: new FailOpenStorage(await storageOf(redisUrl)),
          }),
        }),
      ],
      providers: [{ provide: APP_GUARD, useClass: RateLimitGuard }],
    };
  }
}

async function storageOf(redisUrl: string | null): Promise<ThrottlerStorage> {
  const log = new Logger('RateLimit');
  if (redisUrl === null) {
    log.log('rate limit counters in memory (one instance only): set REDIS_URL to share them');
    return new ThrottlerStorageService();
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined); // reported by FailOpenStorage when a count fails
  const ready = await Promise.race([
    redis.connect().then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((r) => setTimeout(() => r(false), REDIS_READY_TIMEOUT_MS).unref()),
  ]);
  const where = redactUrl(redisUrl);
  if (ready) log.log({ redis: where }, 'rate limit counters in Redis');
  else log.warn({ redis: where }, 'Redis not reachable: not limiting until it is');
  return new ClosingRedisStorage(redis);
}

/** The Redis storage, disconnecting its client when the application shuts down. */
class ClosingRedisStorage extends ThrottlerStorageRedisService {
  constructor(private readonly client: Redis) {
    super(client);
  }

  override onModuleDestroy(): void {
    this.client.disconnect(false);
  }
}
