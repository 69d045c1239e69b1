import { type DataSource } from 'typeorm';

/** Arbitrary constant: the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK_KEY = 7_406_314_201;

/**
 * Runs pending migrations under a PostgreSQL advisory lock, so several instances starting
 * together against one database migrate once and never race each other.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const done = await dataSource.runMigrations({ transaction: 'each' });
      return done.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}
