import { DialogueError } from 'src/core';
import { readEndpointsYaml } from 'src/platform/config/endpoints-yaml';

/** How to reach a Redis server (Rasa's `lock_store` keys, resolved). */
export interface RedisConnectionSettings {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | null;
  readonly password: string | null;
  readonly useSsl: boolean;
  /** `socket_timeout` in ms: connect and command timeout. */
  readonly socketTimeoutMs: number;
}

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
 * `rediss://` URL), `port` 6379, `db` 1, `username`, `password`, `use_ssl`, `key_prefix`
 * (alphanumeric, else ignored with a warning, as Rasa), `socket_timeout` 10 s.
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
  return {
    type: 'redis',
    spelledAs: type,
    connection: {
      host: host ?? 'localhost',
      port,
      db,
      username,
      password,
      useSsl,
      socketTimeoutMs: Math.round(socketTimeout * 1000),
    },
    keyPrefix,
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
  return parseStoreEndpoints(file, await readEndpointsYaml(file));
}
