import { readFileSync } from 'node:fs';
import { DialogueError } from 'src/core';
import { readEndpointsYaml } from 'src/platform/config/endpoints-yaml';

/** Rasa's `deployment_mode`: one server, a Redis Cluster, or a master found through Sentinel. */
export const REDIS_DEPLOYMENT_MODES = ['standard', 'cluster', 'sentinel'] as const;
export type RedisDeploymentMode = (typeof REDIS_DEPLOYMENT_MODES)[number];

export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** `ssl_certfile`, `ssl_keyfile`, `ssl_ca_certs`: paths (null when absent). */
export interface RedisTlsFiles {
  readonly certFile: string | null;
  readonly keyFile: string | null;
  readonly caCerts: string | null;
}

/** How to reach Redis (Rasa's `lock_store` keys, resolved). */
export interface RedisConnectionSettings {
  readonly deploymentMode: RedisDeploymentMode;
  /** The server (standard mode); in cluster mode the seed node when `endpoints` is empty. */
  readonly host: string;
  readonly port: number;
  /** Cluster: the seed nodes; sentinel: the sentinels. Empty in standard mode. */
  readonly endpoints: readonly RedisNode[];
  /** Sentinel mode: the master's name (`sentinel_service`); null otherwise. */
  readonly sentinelService: string | null;
  /** Always 0 in cluster mode (Redis Cluster has database 0 only). */
  readonly db: number;
  readonly username: string | null;
  readonly password: string | null;
  readonly useSsl: boolean;
  /** Used only with `useSsl`. */
  readonly tlsFiles: RedisTlsFiles;
  /** `socket_timeout` in ms: connect and command timeout. */
  readonly socketTimeoutMs: number;
}

export const NO_TLS_FILES: RedisTlsFiles = { certFile: null, keyFile: null, caCerts: null };

/** The `lock_store` entry of endpoints.yml. */
export type LockStoreEndpoint =
  | { readonly type: 'in_memory' }
  | {
      readonly type: 'redis';
      /** The spelling used (`redis` or `concurrent_redis`): both are the same ticket lock. */
      readonly spelledAs: 'redis' | 'concurrent_redis';
      readonly connection: RedisConnectionSettings;
      /** Valid `key_prefix`, or null (absent, or not alphanumeric: ignored with a warning). */
      readonly keyPrefix: string | null;
    };

/** The `tracker_store` entry: Parley serves `type: sql` with the PostgreSQL dialect. */
export interface TrackerStoreEndpoint {
  readonly type: 'sql';
  /** postgresql:// URL built from the entry (may hold a password: never log it unredacted). */
  readonly url: string;
}

export interface StoreEndpoints {
  /** null: no `lock_store` entry (LOCK_STORE decides). */
  readonly lockStore: LockStoreEndpoint | null;
  /** null: no `tracker_store` entry (DATABASE_URL or the embedded PostgreSQL). */
  readonly trackerStore: TrackerStoreEndpoint | null;
  /** Entries accepted with a caveat, each naming the file and the key. */
  readonly warnings: string[];
}

export const SUPPORTED_LOCK_STORES = ['redis', 'concurrent_redis', 'in_memory'] as const;
export const SUPPORTED_TRACKER_STORES = ['sql (dialect: postgresql)'] as const;

const DEFAULT_REDIS_PORT = 6379;
const DEFAULT_SENTINEL_PORT = 26379;
/** Parley's `sentinel_service` when the entry names none (Redis's customary master name). */
const DEFAULT_SENTINEL_SERVICE = 'mymaster';
/** Rasa's default `db` of its Redis lock stores. */
const DEFAULT_REDIS_DB = 1;
const DEFAULT_SOCKET_TIMEOUT_S = 10;
const DEFAULT_PG_PORT = 5432;

const invalid = (message: string): DialogueError => new DialogueError('CONFIG.INVALID', message);

function mapping(file: string, key: string, value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${file}: ${key} must be a mapping (type, host, …)`);
  }
  return value as Record<string, unknown>;
}

function optionalString(file: string, key: string, value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw invalid(`${file}: ${key} must be a string`);
}

function integer(
  file: string,
  key: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw invalid(`${file}: ${key} must be an integer from ${min} to ${max}`);
  }
  return n;
}

function boolean(file: string, key: string, value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw invalid(`${file}: ${key} must be true or false`);
}

/**
 * `lock_store` in Rasa's spelling. `host` (or the older `url`: a host name, or a `redis://` /
 * `rediss://` URL), `port` 6379, `db` 1, `username`, `password`, `use_ssl` with
 * `ssl_certfile` / `ssl_keyfile` / `ssl_ca_certs`, `key_prefix` (alphanumeric, else ignored
 * with a warning, as Rasa), `socket_timeout` 10 s, `deployment_mode` (standard, cluster,
 * sentinel) with `endpoints` ("host:port" list) and `sentinel_service`.
 */
function lockStoreOf(
  file: string,
  data: Record<string, unknown>,
  warnings: string[],
): LockStoreEndpoint | null {
  const e = mapping(file, 'lock_store', data.lock_store);
  if (e === null) return null;
  const type = e.type;
  const supported = SUPPORTED_LOCK_STORES.join(', ');
  if (typeof type !== 'string' || type === '') {
    throw invalid(`${file}: lock_store needs a type; supported: ${supported}`);
  }
  if (type === 'in_memory') return { type: 'in_memory' };
  if (type !== 'redis' && type !== 'concurrent_redis') {
    throw invalid(`${file}: lock_store type '${type}' is not supported; supported: ${supported}`);
  }
  const key = (k: string): string => `lock_store.${k}`;
  let host = optionalString(file, key('host'), e.host) ?? optionalString(file, key('url'), e.url);
  let port = integer(file, key('port'), e.port, DEFAULT_REDIS_PORT, 1, 65_535);
  let db = integer(file, key('db'), e.db, DEFAULT_REDIS_DB, 0, 1_000_000);
  let username = optionalString(file, key('username'), e.username);
  let password = optionalString(file, key('password'), e.password);
  let useSsl = boolean(file, key('use_ssl'), e.use_ssl);
  if (host !== null && /^rediss?:\/\//i.test(host)) {
    // A URL in `url` / `host`: its parts, unless the entry gives them separately.
    let parsed: URL;
    try {
      parsed = new URL(host);
    } catch {
      throw invalid(`${file}: lock_store.url is not a valid redis:// URL`);
    }
    useSsl ||= parsed.protocol === 'rediss:';
    if (e.port === undefined && parsed.port !== '') port = Number(parsed.port);
    const path = parsed.pathname.replace(/^\//, '');
    if (e.db === undefined && path !== '') db = integer(file, key('url'), path, db, 0, 1_000_000);
    username ??= parsed.username !== '' ? decodeURIComponent(parsed.username) : null;
    password ??= parsed.password !== '' ? decodeURIComponent(parsed.password) : null;
    host = parsed.hostname.replace(/^\[|\]$/g, '');
  }
  const socketTimeout = e.socket_timeout ?? DEFAULT_SOCKET_TIMEOUT_S;
  if (typeof socketTimeout !== 'number' || !(socketTimeout > 0) || socketTimeout > 3600) {
    throw invalid(`${file}: lock_store.socket_timeout must be a number of seconds (0 < s ≤ 3600)`);
  }
  let keyPrefix: string | null = null;
  if (e.key_prefix !== undefined && e.key_prefix !== null && e.key_prefix !== '') {
    if (typeof e.key_prefix === 'string' && /^[\p{L}\p{N}]+$/u.test(e.key_prefix)) {
      keyPrefix = e.key_prefix;
    } else {
      warnings.push(
        `${file}: lock_store.key_prefix is not alphanumeric and is ignored (keys have no prefix)`,
      );
    }
  }
  const mode = deploymentModeOf(file, e.deployment_mode);
  const given = (k: string): boolean => e[k] !== undefined && e[k] !== null && e[k] !== '';
  const defaultPort = mode === 'sentinel' ? DEFAULT_SENTINEL_PORT : DEFAULT_REDIS_PORT;
  const endpoints = endpointsOf(file, e.endpoints, defaultPort);
  let sentinelService = optionalString(file, key('sentinel_service'), e.sentinel_service);
  if (mode === 'standard' && endpoints.length > 0) {
    warnings.push(
      `${file}: lock_store.endpoints is ignored in deployment_mode standard (host and port are used)`,
    );
  }
  if (mode !== 'sentinel' && sentinelService !== null) {
    warnings.push(
      `${file}: lock_store.sentinel_service is ignored outside deployment_mode sentinel`,
    );
    sentinelService = null;
  }
  if (mode === 'sentinel') {
    if (endpoints.length === 0) {
      throw invalid(
        `${file}: lock_store.endpoints must list the sentinels ("host:port") in deployment_mode sentinel`,
      );
    }
    sentinelService ??= DEFAULT_SENTINEL_SERVICE;
  }
  if (mode === 'cluster') {
    if (given('db') && db !== 0) {
      warnings.push(
        `${file}: lock_store.db is ignored in deployment_mode cluster (Redis Cluster has database 0 only)`,
      );
    }
    db = 0;
  }
  const tlsFiles: RedisTlsFiles = {
    certFile: optionalString(file, key('ssl_certfile'), e.ssl_certfile),
    keyFile: optionalString(file, key('ssl_keyfile'), e.ssl_keyfile),
    caCerts: optionalString(file, key('ssl_ca_certs'), e.ssl_ca_certs),
  };
  for (const [k, v] of Object.entries({
    ssl_certfile: tlsFiles.certFile,
    ssl_keyfile: tlsFiles.keyFile,
    ssl_ca_certs: tlsFiles.caCerts,
  })) {
    if (v !== null && !useSsl) {
      warnings.push(`${file}: lock_store.${k} is ignored: use_ssl is false`);
    }
  }
  if ((tlsFiles.certFile === null) !== (tlsFiles.keyFile === null) && useSsl) {
    throw invalid(
      `${file}: lock_store.${tlsFiles.certFile === null ? 'ssl_certfile' : 'ssl_keyfile'} is missing: a client certificate needs both ssl_certfile and ssl_keyfile`,
    );
  }
  return {
    type: 'redis',
    spelledAs: type,
    connection: {
      deploymentMode: mode,
      host: host ?? 'localhost',
      port,
      endpoints: mode === 'standard' ? [] : endpoints,
      sentinelService,
      db,
      username,
      password,
      useSsl,
      tlsFiles: useSsl ? tlsFiles : NO_TLS_FILES,
      socketTimeoutMs: Math.round(socketTimeout * 1000),
    },
    keyPrefix,
  };
}

function deploymentModeOf(file: string, value: unknown): RedisDeploymentMode {
  if (value === undefined || value === null || value === '') return 'standard';
  const mode = typeof value === 'string' ? value.toLowerCase() : value;
  if (!REDIS_DEPLOYMENT_MODES.includes(mode as RedisDeploymentMode)) {
    throw invalid(
      `${file}: lock_store.deployment_mode must be one of ${REDIS_DEPLOYMENT_MODES.join(', ')}`,
    );
  }
  return mode as RedisDeploymentMode;
}

/**
 * `endpoints`: a list of "host:port" strings (IPv6 as "[::1]:6379"; a host alone takes the
 * mode's default port). A single string is read as a comma-separated list.
 */
function endpointsOf(file: string, value: unknown, defaultPort: number): RedisNode[] {
  if (value === undefined || value === null || value === '') return [];
  const list =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : value;
  if (!Array.isArray(list)) {
    throw invalid(`${file}: lock_store.endpoints must be a list of "host:port" strings`);
  }
  return list.map((entry: unknown, i) => {
    const where = `${file}: lock_store.endpoints[${i}]`;
    if (typeof entry !== 'string' || entry.trim() === '') {
      throw invalid(`${where} must be a "host:port" string`);
    }
    const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(entry.trim());
    const port = m?.[3] === undefined ? defaultPort : Number(m[3]);
    if (m === null || !(port >= 1 && port <= 65_535)) {
      throw invalid(`${where} '${entry}' is not a "host:port" address`);
    }
    return { host: (m[1] ?? m[2]) as string, port };
  });
}

/** The contents of the TLS files of a connection, read now (a missing file names its key). */
export interface RedisTlsMaterial {
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly ca?: Buffer;
}

export function readRedisTlsFiles(files: RedisTlsFiles, section = 'lock_store'): RedisTlsMaterial {
  const read = (k: string, path: string | null): Buffer | undefined => {
    if (path === null) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw invalid(`${section}.${k}: cannot read '${path}' (${code})`);
    }
  };
  const cert = read('ssl_certfile', files.certFile);
  const key = read('ssl_keyfile', files.keyFile);
  const ca = read('ssl_ca_certs', files.caCerts);
  return {
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
}

/**
 * `tracker_store`: `type: sql` with `dialect: postgresql` (`postgresql+<driver>` too), `host`
 * (or `url`: a host, or a whole postgres:// URL), `port` 5432, `db`, `username`, `password` →
 * Parley's PostgreSQL store on that server. Rasa's other stores are refused by name;
 * `in_memory` is accepted with a warning (conversations are kept in PostgreSQL anyway).
 */
function trackerStoreOf(
  file: string,
  data: Record<string, unknown>,
  warnings: string[],
): TrackerStoreEndpoint | null {
  const e = mapping(file, 'tracker_store', data.tracker_store);
  if (e === null) return null;
  const type = e.type;
  const supported = SUPPORTED_TRACKER_STORES.join(', ');
  if (type === 'in_memory') {
    warnings.push(
      `${file}: tracker_store type 'in_memory' is not used: Parley keeps conversations in its PostgreSQL database`,
    );
    return null;
  }
  if (typeof type !== 'string' || type === '') {
    throw invalid(`${file}: tracker_store needs a type; supported: ${supported}`);
  }
  if (type !== 'sql') {
    throw invalid(
      `${file}: tracker_store type '${type}' is not supported; supported: ${supported}`,
    );
  }
  const key = (k: string): string => `tracker_store.${k}`;
  const host = optionalString(file, key('host'), e.host) ?? optionalString(file, key('url'), e.url);
  const dialect = optionalString(file, key('dialect'), e.dialect);
  const isUrl = host !== null && /^postgres(ql)?:\/\//i.test(host);
  if (dialect === null ? !isUrl : !/^postgres(ql)?(\+\w+)?$/i.test(dialect)) {
    throw invalid(
      `${file}: tracker_store dialect '${dialect ?? 'sqlite'}' is not supported; supported: ${supported}`,
    );
  }
  if (isUrl) {
    try {
      new URL(host);
    } catch {
      throw invalid(`${file}: tracker_store.url is not a valid postgresql:// URL`);
    }
    return { type: 'sql', url: host };
  }
  const db = optionalString(file, key('db'), e.db);
  if (db === null) throw invalid(`${file}: tracker_store needs a 'db' (the database name)`);
  const port = integer(file, key('port'), e.port, DEFAULT_PG_PORT, 1, 65_535);
  const username = optionalString(file, key('username'), e.username);
  const password = optionalString(file, key('password'), e.password);
  const url = new URL('postgresql://localhost');
  url.hostname = host ?? 'localhost';
  url.port = String(port);
  url.pathname = `/${encodeURIComponent(db)}`;
  if (username !== null) url.username = encodeURIComponent(username);
  if (password !== null) url.password = encodeURIComponent(password);
  return { type: 'sql', url: url.toString() };
}

/** The store entries of a parsed endpoints.yml; throws `CONFIG.INVALID` naming the key. */
export function parseStoreEndpoints(file: string, data: Record<string, unknown>): StoreEndpoints {
  const warnings: string[] = [];
  const lockStore = lockStoreOf(file, data, warnings);
  const trackerStore = trackerStoreOf(file, data, warnings);
  return { lockStore, trackerStore, warnings };
}

/** Reads and checks the `lock_store` and `tracker_store` entries of an endpoints.yml. */
export async function readStoreEndpoints(file: string | null): Promise<StoreEndpoints> {
  if (file === null) return { lockStore: null, trackerStore: null, warnings: [] };
  const stores = parseStoreEndpoints(file, await readEndpointsYaml(file));
  if (stores.lockStore?.type === 'redis' && stores.lockStore.connection.useSsl) {
    // The TLS files must be there at start: a missing one stops the start naming its key.
    readRedisTlsFiles(stores.lockStore.connection.tlsFiles);
  }
  return stores;
}
