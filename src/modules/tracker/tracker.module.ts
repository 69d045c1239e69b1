import { DynamicModule, Module } from '@nestjs/common';
import { Clock, InMemoryLockStore, LockStore, SystemClock, TrackerStore } from 'src/core';
import { type AppConfig } from 'src/platform/config/app-config';
import { ConversationQuery } from './conversation-query';
import { PostgresConversationQuery } from './postgres-conversation-query';
import { PostgresLockStore } from './postgres-lock-store';
import { PostgresTrackerStore } from './postgres-tracker-store';
import { TrackerController } from './tracker.controller';
import { TrackerService } from './tracker.service';

/**
 * Conversation trackers: the PostgreSQL event log behind the TrackerStore port, the queries of
 * the conversation tables behind ConversationQuery (this module owns those tables), the
 * LockStore (in-process, or PostgreSQL advisory locks for several instances) and the tracker
 * routes.
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
      controllers: config.http.enableApi ? [TrackerController] : [],
      providers: [
        TrackerService,
        { provide: TrackerStore, useClass: PostgresTrackerStore },
        { provide: ConversationQuery, useClass: PostgresConversationQuery },
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
      exports: [TrackerService, TrackerStore, ConversationQuery, LockStore, Clock],
    };
  }
}
