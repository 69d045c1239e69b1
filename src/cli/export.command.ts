import { existsSync } from 'node:fs';
import { readEventBroker } from 'src/modules/engine';
import { createBroker, exportToBroker, type ExportResult } from 'src/modules/event-broker';
import { EventOutbox } from 'src/modules/tracker';
import { validateEnv } from 'src/platform/config/validate-env';
import { checkDatabaseUrl } from 'src/platform/database/database-preflight';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from 'src/platform/database/embedded-postgres.launcher';
import { runMigrationsLocked } from 'src/platform/database/run-migrations';
import { buildTypeOrmOptions } from 'src/platform/database/typeorm-options';
import { DataSource } from 'typeorm';

export interface ExportOptions {
  endpoints?: string;
  minimumTimestamp?: number;
  maximumTimestamp?: number;
  conversationIds?: string;
}

/** A failure of `parley export` worded for the terminal (exit code 1). */
export class ExportError extends Error {}

/**
 * `parley export` (Rasa's `rasa export`): publishes the stored conversations (all, or
 * `--conversation-ids`, events with `--minimum-timestamp` <= timestamp < `--maximum-timestamp`)
 * to the `event_broker` of `--endpoints` (default endpoints.yml), from the database of
 * DATABASE_URL (or the embedded PostgreSQL of PARLEY_DATA_DIR, as `parley run`).
 */
export async function exportConversations(opts: ExportOptions): Promise<ExportResult> {
  const file = opts.endpoints ?? 'endpoints.yml';
  if (!existsSync(file)) throw new ExportError(`--endpoints: file not found: ${file}`);
  const brokerConfig = await readEventBroker(file);
  if (brokerConfig === null) {
    throw new ExportError(`${file} configures no event_broker: nothing to export to`);
  }
  const { minimumTimestamp: min, maximumTimestamp: max } = opts;
  if (min !== undefined && max !== undefined && min >= max) {
    throw new ExportError('--minimum-timestamp must be smaller than --maximum-timestamp');
  }
  const conversationIds = opts.conversationIds
    ?.split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  const config = validateEnv(process.env);
  let embedded: EmbeddedPostgresHandle | null = null;
  let url = config.database.url;
  if (url !== null) {
    await checkDatabaseUrl(url);
  } else {
    embedded = await startEmbeddedPostgres({
      dataDir: config.database.dataDir,
      port: config.database.embeddedPort,
      log: () => undefined,
    });
    url = embedded.url;
  }
  const broker = createBroker(brokerConfig, url);
  const dataSource = new DataSource(buildTypeOrmOptions(url, 2));
  try {
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    try {
      await broker.connect();
    } catch (error) {
      throw new ExportError(
        `event_broker ${broker.name} (${broker.target}) is not reachable: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const result = await exportToBroker(new EventOutbox(dataSource), broker, {
      ...(min !== undefined ? { minimumTimestamp: min } : {}),
      ...(max !== undefined ? { maximumTimestamp: max } : {}),
      ...(conversationIds !== undefined && conversationIds.length > 0 ? { conversationIds } : {}),
    });
    if (result.events === 0) {
      throw new ExportError(
        'no events to export: no stored event matches the conversation ids and timestamps given',
      );
    }
    return result;
  } finally {
    await broker.close();
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop().catch(() => undefined);
  }
}
