import { type PoolConfig } from 'pg';

/** `application_name` of every connection Parley opens, so operators can find its backends. */
export const APPLICATION_NAME = 'parley';

/** How long a client is told to wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Connection settings every pg pool of the server shares. */
export const POOL_DEFAULTS: Readonly<Pick<PoolConfig, 'connectionTimeoutMillis'>> = {
  connectionTimeoutMillis: 10_000,
};

/** Node socket errors that mean the server cannot be reached or the connection broke. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is going away or refusing connections: admin_shutdown (the
 * backend was terminated), crash_shutdown, cannot_connect_now, too_many_connections; and the
 * whole connection-exception class 08.
 */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Messages node-postgres gives a broken or unusable connection (it sets no code on them). */
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Connection is not established with',
  // query_timeout (DATABASE_QUERY_TIMEOUT_MS) ran out: no answer, the connection is given up
  'Query read timeout',
];

/**
 * Whether `error` says the database cannot be reached now (connection refused, broken, timed
 * out, terminated by the server, pool closed) — as opposed to a statement the database
 * rejected. TypeORM wraps driver errors (`driverError`); both layers are looked at.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')) return true;
    }
    if (typeof message === 'string' && MESSAGES.some((m) => message.startsWith(m))) return true;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e =
      (e as { driverError?: unknown; cause?: unknown }).driverError ??
      (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The events of pg's Pool this module listens to. */
interface GuardedPool {
  on(
    event: 'connect',
    listener: (client: { on(event: 'error', l: () => void): void }) => void,
  ): unknown;
}

/**
 * Gives every new connection of `pool` an 'error' listener of its own for its whole life. pg's
 * pool listens on a client only while it is idle, and hands a new client over through a
 * callback the caller often turns into a promise: a connection the server terminates right
 * after it was opened (its error arriving in the same read as its ready message) would
 * otherwise raise an 'error' event nobody listens to — and end the process. Failures reach the
 * caller anyway: a broken client's next query fails, and the pool drops it.
 */
export function guardPoolConnections(pool: GuardedPool): void {
  pool.on('connect', (client) => client.on('error', () => undefined));
}
