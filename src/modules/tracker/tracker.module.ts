import { Module } from '@nestjs/common';
import { InMemoryLockStore, LockStore, TrackerStore } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DATABASE_URL } from 'src/platform/database/database.module';
import { ConversationQuery } from './conversation-query';
import { EventOutbox } from './event-outbox';
import { PostgresConversationQuery } from './postgres-conversation-query';
import { PostgresLockStore } from './postgres-lock-store';
import { PostgresTrackerStore } from './postgres-tracker-store';

/**
 * Conversation storage. It owns the conversation tables: the PostgreSQL event log behind the
 * TrackerStore port, the queries of the conversation-management API behind ConversationQuery,
 * and the LockStore (in-process, or PostgreSQL advisory locks for several instances). The
 * runtime (EngineModule) and the GraphQL module use them through these ports only.
 */
@Module({
  providers: [
    EventOutbox,
    { provide: TrackerStore, useClass: PostgresTrackerStore },
    { provide: ConversationQuery, useClass: PostgresConversationQuery },
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
          : new InMemoryLockStore({ waitTimeoutMs: config.lockStore.lockTimeoutMs }),
    },
  ],
  exports: [TrackerStore, LockStore, ConversationQuery, EventOutbox],
})
export class TrackerModule {}
