import { Logger } from '@nestjs/common';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { existsSync } from 'node:fs';
import pino from 'pino';
import { createParleyApp } from 'src/bootstrap/create-app';
import { gracefulShutdown } from 'src/bootstrap/graceful-shutdown';
import { startEmbeddedIdpIfConfigured } from 'src/modules/auth';
import { InspectorPages } from 'src/modules/inspector';
import { readStoreEndpoints } from 'src/modules/tracker';
import { DEFAULT_OPERATIONS, type AppConfig } from 'src/platform/config/app-config';
import { checkDatabaseUrl } from 'src/platform/database/database-preflight';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from 'src/platform/database/embedded-postgres.launcher';
import { baseLoggerOptions } from 'src/platform/logging/logger-options';
import { watchLauncher } from './node-flags';

/**
 * `parley run`: resolve the database (DATABASE_URL, or the embedded PostgreSQL under
 * `.parley/`), start the HTTP server, and shut both down cleanly on SIGINT/SIGTERM.
 */
export async function runServer(
  configured: AppConfig,
  onListening?: (app: NestExpressApplication, port: number) => void,
): Promise<void> {
  let config = configured;
  const log = pino({ ...baseLoggerOptions(config.logLevel), base: { context: 'Bootstrap' } });
  if (config.files.credentials !== null && !existsSync(config.files.credentials)) {
    log.warn(
      { file: config.files.credentials },
      'credentials file not found; channels use defaults',
    );
  }
  // endpoints.yml's stores are checked before anything starts: an unsupported type stops here.
  const stores = await readStoreEndpoints(config.files.endpoints);
  let embedded: EmbeddedPostgresHandle | null = null;
  let url = databaseUrlOf(config.database.url, stores.trackerStore?.url ?? null, log);
  if (url !== null) await checkDatabaseUrl(url);
  if (url === null) {
    const started = Date.now();
    embedded = await startEmbeddedPostgres({
      dataDir: config.database.dataDir,
      port: config.database.embeddedPort,
      log: (m) => log.debug({ postgres: m }),
    });
    url = embedded.url;
    log.info(
      { dataDir: config.database.dataDir, port: embedded.port, ms: Date.now() - started },
      'embedded PostgreSQL started',
    );
  }
  const started = await startEmbeddedIdpIfConfigured(config, log);
  config = started.config;
  const idp = started.idp;
  let app: NestExpressApplication | null = null;
  let stopping = false;
  const operations = config.operations ?? DEFAULT_OPERATIONS;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Past the budget the process exits anyway (Kubernetes would SIGKILL it a little later).
    setTimeout(() => {
      log.error({ timeoutMs: operations.shutdownTimeoutMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, operations.shutdownTimeoutMs).unref();
    try {
      if (app !== null) await gracefulShutdown(app, operations);
    } catch (error) {
      log.error({ error: (error as Error).message }, 'shutdown failed');
    } finally {
      await idp?.stop().catch(() => undefined);
      await embedded?.stop().catch(() => undefined);
      process.exit(0);
    }
  };
  // `on`, not `once`: a second signal (Ctrl-C reaches the launcher and the server, and the
  // launcher passes it on) must not cut a clean shutdown short.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => void stop('SIGHUP'));
  watchLauncher(() => void stop('launcher gone'));
  // A promise a library rejects without anyone to hand it to (ioredis rejects the commands it
  // sends itself after a reconnection when the connection drops again) must not end a server
  // that serves everyone else: it is logged, and the server goes on. Node would exit.
  process.on('unhandledRejection', (reason) => {
    log.error(
      { err: reason instanceof Error ? reason.message : String(reason) },
      'a promise was rejected with no handler; the server goes on',
    );
  });
  try {
    app = await createParleyApp(config, url);
    const server = await app.listen(config.http.port, config.http.host);
    server.setTimeout?.(config.http.responseTimeoutMs);
    server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
    // Node's rule: the headers timeout must exceed the keep-alive timeout.
    server.headersTimeout = config.http.keepAliveTimeoutMs + 1_000;
    // Through the application logger, so that it follows Nest's start-up lines in the output.
    new Logger('Bootstrap').log(
      {
        url: `http://${config.http.host}:${config.http.port}`,
        enableApi: config.http.enableApi,
        nodeFlags: process.execArgv,
      },
      'Parley is listening',
    );
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.http.port;
    if (config.inspect) logInspectorPages(app, config.http.host, port);
    onListening?.(app, port);
  } catch (e) {
    await idp?.stop().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw e;
  }
}

/** The browser's address of a server listening on `host` (0.0.0.0 and :: shown as localhost). */
export function browserBase(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** As Rasa: one line per channel with the address of its inspector page. */
function logInspectorPages(app: NestExpressApplication, host: string, port: number): void {
  const logger = new Logger('Inspector');
  for (const channel of app.get(InspectorPages).channels()) {
    logger.log(
      `Development inspector for channel ${channel} is running. To inspect conversations, visit ${browserBase(host, port)}/webhooks/${channel}/inspect.html`,
    );
  }
}

/** Where a database URL points, without its credentials (for logs). */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * The PostgreSQL of the conversations: DATABASE_URL; else endpoints.yml's `tracker_store`
 * (`type: sql`); else null (the embedded server). When both name a database and they differ,
 * DATABASE_URL wins and the log says so.
 */
function databaseUrlOf(
  fromEnv: string | null,
  fromEndpoints: string | null,
  log: pino.Logger,
): string | null {
  if (fromEndpoints === null) return fromEnv;
  if (fromEnv === null) {
    log.info(
      { database: where(fromEndpoints) },
      'conversations stored as endpoints.yml tracker_store says',
    );
    return fromEndpoints;
  }
  if (fromEnv !== fromEndpoints) {
    log.warn(
      { DATABASE_URL: where(fromEnv), tracker_store: where(fromEndpoints) },
      'DATABASE_URL and endpoints.yml tracker_store name different databases: DATABASE_URL wins',
    );
  }
  return fromEnv;
}
