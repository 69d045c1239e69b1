import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { type Pool } from 'pg';
import { ReminderStore } from 'src/core';
import { gauge } from 'src/platform/metrics/registry';
import { DataSource } from 'typeorm';
import { PostgresReminderStore } from './postgres-reminder-store';

/** How often the `parley_reminders_due` gauge is measured. */
const DUE_GAUGE_MS = 1_000;

/**
 * `parley_reminders_due`: reminders whose time has come and that have not fired yet, on the
 * whole database (every instance measures the same number). Steadily above zero: the pollers
 * cannot keep up, or the model is not loaded.
 */
@Injectable()
export class ReminderMetrics implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Reminders');
  private readonly due = gauge(
    'parley_reminders_due',
    'Reminders due and not fired yet (pending or being fired), across all instances',
  );
  private timer: NodeJS.Timeout | null = null;
  private measuring = false;

  constructor(@Inject(ReminderStore) private readonly store: ReminderStore) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.measure(), DUE_GAUGE_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  async measure(): Promise<void> {
    if (this.measuring) return;
    this.measuring = true;
    try {
      this.due.set(await this.store.dueCount(Date.now()));
    } catch (e) {
      this.logger.debug({ err: (e as Error).message }, 'reminders due not measured');
    } finally {
      this.measuring = false;
    }
  }
}

/**
 * Reminders persisted in PostgreSQL (table `reminder`), behind the ReminderStore port: the
 * engine's ReminderScheduler writes them, its ReminderPoller claims and fires them.
 */
@Module({
  providers: [
    {
      provide: ReminderStore,
      inject: [DataSource],
      useFactory: (dataSource: DataSource): ReminderStore =>
        new PostgresReminderStore((dataSource.driver as unknown as { master: Pool }).master),
    },
    ReminderMetrics,
  ],
  exports: [ReminderStore],
})
export class RemindersModule {}
