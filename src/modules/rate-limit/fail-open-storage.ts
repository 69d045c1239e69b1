import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ThrottlerStorage } from '@nestjs/throttler';
import { type ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/**
 * Lets requests through while the shared counters cannot be reached (Redis down): a rate
 * limiter must not turn a Redis outage into an outage of the service. One warning a minute.
 */
export class FailOpenStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly log = new Logger('RateLimit');
  private lastWarning = 0;

  constructor(private readonly inner: ThrottlerStorage) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    try {
      return await this.inner.increment(key, ttl, limit, blockDuration, throttlerName);
    } catch (e) {
      const now = Date.now();
      if (now - this.lastWarning > 60_000) {
        this.lastWarning = now;
        this.log.warn(
          { err: (e as Error).message },
          'rate limit counters unreachable; not limiting',
        );
      }
      return {
        totalHits: 0,
        timeToExpire: Math.ceil(ttl / 1000),
        isBlocked: false,
        timeToBlockExpire: 0,
      };
    }
  }

  /** Closes the inner storage (the Redis client; the in-memory storage's timers). */
  onApplicationShutdown(): void {
    const inner = this.inner as Partial<{
      onModuleDestroy(): void;
      onApplicationShutdown(): void;
    }>;
    inner.onModuleDestroy?.();
    inner.onApplicationShutdown?.();
  }
}
