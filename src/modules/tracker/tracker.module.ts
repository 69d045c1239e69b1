import { Logger, Module } from '@nestjs/common';
import { InMemoryLockStore, LockStore, TrackerStore } from 'src/core';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { DATABASE_URL } from 'src/platform/database/database.module';
import { ConversationQuery } from './conversation-query';
import { EventOutbox } from './event-outbox';
import { MeteredLockStore } from './metered-lock-store';
import { PostgresConversationQuery } from './postgres-conversation-query';
import { PostgresLockStore } from './postgres-lock-store';
import { PostgresTrackerStore } from './postgres-tracker-store';
import { RedisLockStore } from './redis-lock-store';
import { readStoreEndpoints } from './store-endpoints';

/**
 * Conversation storage. It owns the conversation tables: the PostgreSQL event log behind the
 * TrackerStore port, the queries of the conversation-management API behind ConversationQuery,
 * and the LockStore (in-process, PostgreSQL advisory locks or Redis tickets for several
 * instances). The runtime (EngineModule) and the GraphQL module use them through these ports.
 */
@Module({
  providers: [
    EventOutbox,
    { provide: TrackerStore, useClass: PostgresTrackerStore },
    { provide: ConversationQuery, useClass: PostgresConversationQuery },
    {
      provide: LockStore,
      inject: [APP_CONFIG, DATABASE_URL],
      useFactory: (config: AppConfig, databaseUrl: string): Promise<LockStore> =>
        createLockStore(config, databaseUrl),
    },
  ],
  exports: [TrackerStore, LockStore, ConversationQuery, EventOutbox],
})
export class TrackerModule {}

/**
 * The lock store of the process: endpoints.yml's `lock_store` when present (`redis` /
 * `concurrent_redis` → Redis tickets, `in_memory` → in-process), else `LOCK_STORE`
 * (`memory` or `postgres`). Always measured (MeteredLockStore).
 */
async function createLockStore(config: AppConfig, databaseUrl: string): Promise<LockStore> {
  const logger = new Logger('LockStore');
  const { lockTimeoutMs, lifetimeSeconds } = config.lockStore;
  const stores = await readStoreEndpoints(config.files.endpoints);
  for (const warning of stores.warnings) logger.warn(warning);
  const endpoint = stores.lockStore;
  if (endpoint?.type === 'redis') {
    const { host, port, db } = endpoint.connection;
    const store = new RedisLockStore({
      connection: endpoint.connection,
      keyPrefix: endpoint.keyPrefix,
      lifetimeMs: lifetimeSeconds * 1000,
      lockTimeoutMs,
    });
    await store.start();
    logger.log(
      { type: endpoint.spelledAs, host, port, db, lifetimeSeconds },
      'conversations are locked in Redis',
    );
    return new MeteredLockStore(store, 'redis');
  }
  if (endpoint?.type === 'in_memory' || config.lockStore.type === 'memory') {
    return new MeteredLockStore(new InMemoryLockStore({ waitTimeoutMs: lockTimeoutMs }), 'memory');
  }
  const poolSize = Math.max(4, Math.floor(config.database.poolSize / 2));
  return new MeteredLockStore(
    new PostgresLockStore(databaseUrl, poolSize, lockTimeoutMs),
    'postgres',
  );
}
