import { DynamicModule, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { type Pool } from 'pg';
import { DataSource } from 'typeorm';
import { guardPoolConnections } from './database-errors';
import { runMigrationsLocked } from './run-migrations';
import { buildTypeOrmOptions } from './typeorm-options';

/**
 * TypeORM over PostgreSQL. The URL is resolved before Nest starts (an external server or the
 * embedded one), and pending migrations run at start under an advisory lock. Lost connections
 * never end the process (see guardPoolConnections): requests fail with 503 meanwhile.
 */
/** DI token of the database URL (for stores that open their own connections: advisory locks). */
export const DATABASE_URL = Symbol('DATABASE_URL');

@Module({})
export class DatabaseModule {
  static forRoot(url: string, poolSize: number, queryTimeoutMs = 0): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_URL, useValue: url }],
      exports: [DATABASE_URL],
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => buildTypeOrmOptions(url, poolSize, queryTimeoutMs),
          dataSourceFactory: async (options) => {
            if (!options) throw new Error('TypeORM options missing');
            const dataSource = await new DataSource(options).initialize();
            guardPoolConnections((dataSource.driver as unknown as { master: Pool }).master);
            const applied = await runMigrationsLocked(dataSource);
            if (applied.length > 0) {
              new Logger('Database').log({ applied }, 'migrations applied');
            }
            return dataSource;
          },
        }),
      ],
    };
  }
}
