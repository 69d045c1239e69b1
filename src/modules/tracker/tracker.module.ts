import { Module } from '@nestjs/common';
import { InMemoryLockStore, LockStore, TrackerStore } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DATABASE_URL } from 'src/platform/database/database.module';
import { PostgresLockStore } from './postgres-lock-store';
import { TypeOrmTrackerStore } from './typeorm-tracker-store';

/**
 * Conversation storage: the PostgreSQL event log behind the TrackerStore port and the
 * LockStore (in-process, or PostgreSQL advisory locks for several instances). It owns the
 * conversation tables; the runtime (EngineModule) and the GraphQL module use them through
 * ports only.
 */
@Module({
  providers: [
    { provide: TrackerStore, useClass: TypeOrmTrackerStore },
    {
      provide: LockStore,
      inject: [APP_CONFIG, DATABASE_URL],
      useFactory: (config: AppConfig, databaseUrl: string): LockStore =>
        config.lockStore.type === 'postgres'
          ? new PostgresLockStore(
              databaseUrl,
              Math.max(4, Math.floor(config.database.poolSize / 2)),
              config.lockStore.lockTimeoutMs,
            )
          : new InMemoryLockStore(),
    },
  ],
  exports: [TrackerStore, LockStore],
})
export class TrackerModule {}
