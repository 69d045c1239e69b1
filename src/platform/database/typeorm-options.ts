import { Logger } from '@nestjs/common';
import { type DataSourceOptions } from 'typeorm';
import { APPLICATION_NAME, POOL_DEFAULTS } from './database-errors';
import { MIGRATIONS } from './migrations';

const logger = new Logger('Database');

/** The one options builder, used by the app and by the migration runner of the tests. */
export function buildTypeOrmOptions(
  url: string,
  poolSize: number,
  queryTimeoutMs = 0,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    // No entities: the modules that own tables query them with SQL (the tracker module).
    entities: [],
    migrations: MIGRATIONS,
    migrationsRun: false,
    migrationsTableName: 'parley_migrations',
    synchronize: false,
    logging: false,
    applicationName: APPLICATION_NAME,
    // An idle connection the server closed (restart, pg_terminate_backend, network cut): the
    // pool drops it and opens a new one on the next request; the process stays up.
    poolErrorHandler: (err: unknown) =>
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'idle database connection lost',
      ),
    // query_timeout: pg's client-side deadline for an answer. Over a silent partition (packets
    // dropped, no reset) a statement otherwise waits for TCP to give up, and the request with it;
    // on the deadline the pool drops the connection and the request fails with 503.
    extra: {
      max: poolSize,
      ...POOL_DEFAULTS,
      ...(queryTimeoutMs > 0 ? { query_timeout: queryTimeoutMs } : {}),
    },
  };
}
