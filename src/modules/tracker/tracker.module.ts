import { DynamicModule, Module } from '@nestjs/common';
import {
  Clock,
  ConversationReader,
  InMemoryLockStore,
  LockStore,
  SystemClock,
  TrackerStore,
} from 'src/core';
import { ModelModule } from 'src/modules/model';
import { type AppConfig } from 'src/platform/config/app-config';
import { PostgresLockStore } from './postgres-lock-store';
import { TrackerController } from './tracker.controller';
import { TrackerService } from './tracker.service';
import { TypeOrmTrackerStore } from './typeorm-tracker-store';

/**
 * Conversation trackers: the PostgreSQL event log behind the TrackerStore port, the LockStore
 * (in-process, or PostgreSQL advisory locks for several instances) and the tracker routes.
 * Global and imported once, by the app module: Nest 11 tells dynamic modules apart by object
 * identity, so a second `forRoot` would be a second store, lock store and session cache (and
 * the tracker routes twice).
 */
@Module({})
export class TrackerModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: TrackerModule,
      global: true,
      imports: [ModelModule],
      controllers: config.http.enableApi ? [TrackerController] : [],
      providers: [
        TrackerService,
        { provide: ConversationReader, useExisting: TrackerService },
        { provide: TrackerStore, useClass: TypeOrmTrackerStore },
        { provide: Clock, useClass: SystemClock },
        {
          provide: LockStore,
          useFactory: (): LockStore =>
            config.lockStore.type === 'postgres'
              ? new PostgresLockStore(
                  databaseUrl,
                  Math.max(4, Math.floor(config.database.poolSize / 2)),
                  config.lockStore.lockTimeoutMs,
                )
              : new InMemoryLockStore(),
        },
      ],
      exports: [TrackerService, ConversationReader, TrackerStore, LockStore, Clock],
    };
  }
}
