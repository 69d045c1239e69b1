import { Inject, Logger, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { IdempotencyStore } from './idempotency-store';
import { IdempotentIngress } from './idempotent-ingress';

/** Most time between two sweeps of expired keys. */
const MAX_SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Idempotent ingress of the message routes: the `IdempotentIngress` the channels and the
 * conversation routes run each message through, its PostgreSQL store, and a timer that sweeps
 * expired keys (every instance sweeps; the DELETE is harmless when run twice).
 */
@Module({
  providers: [IdempotencyStore, IdempotentIngress],
  exports: [IdempotentIngress],
})
export class IdempotencyModule implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('Idempotency');
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: IdempotencyStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const every = Math.min(this.config.idempotency.retentionMs, MAX_SWEEP_INTERVAL_MS);
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async sweep(): Promise<void> {
    try {
      const n = await this.store.sweep();
      if (n > 0) this.log.debug({ deleted: n }, 'expired idempotency keys swept');
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'sweeping idempotency keys failed');
    }
  }
}
