import { ConversationEventEntity } from 'src/modules/tracker/persistence/conversation-event.entity';
import { ConversationEntity } from 'src/modules/tracker/persistence/conversation.entity';
import { type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';

/** The one options builder, used by the app and by the migration runner of the tests. */
export function buildTypeOrmOptions(url: string, poolSize: number): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [ConversationEntity, ConversationEventEntity],
    migrations: MIGRATIONS,
    migrationsRun: false,
    migrationsTableName: 'parley_migrations',
    synchronize: false,
    logging: false,
    extra: { max: poolSize, connectionTimeoutMillis: 10_000 },
  };
}
