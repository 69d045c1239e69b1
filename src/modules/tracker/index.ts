/** The tracker module's public surface: import from 'src/modules/tracker', not its files. */
export {
  ConversationQuery,
  DEFAULT_ASSISTANT_ID,
  type AddTagOutcome,
  type ConversationPage,
  type ConversationPageQuery,
  type ConversationSnapshot,
  type ConversationSummary,
  type ConversationTag,
  type EventWindow,
  type WindowEvent,
} from './conversation-query';
export {
  EventOutbox,
  type ExportFilter,
  type OutboxBacklog,
  type OutboxEvent,
} from './event-outbox';
export { MeteredLockStore } from './metered-lock-store';
export { PostgresConversationQuery } from './postgres-conversation-query';
export { PostgresLockStore } from './postgres-lock-store';
export { PostgresTrackerStore } from './postgres-tracker-store';
export { RedisLockStore, type RedisLockStoreOptions } from './redis-lock-store';
export {
  NO_TLS_FILES,
  parseStoreEndpoints,
  readStoreEndpoints,
  type LockStoreEndpoint,
  type RedisConnectionSettings,
  type RedisDeploymentMode,
  type RedisNode,
  type RedisTlsFiles,
  type StoreEndpoints,
  type TrackerStoreEndpoint,
} from './store-endpoints';
export { TrackerModule } from './tracker.module';
