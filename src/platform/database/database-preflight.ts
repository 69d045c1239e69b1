import { Client } from 'pg';

/** The external database cannot be used; the message is one line: the cause and the fix. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  constructor(message: string) {
    super(message);
    this.stack = message;
  }
}

export interface PreflightOptions {
  /** How long "connection refused" (a server still starting) is retried. */
  readonly refusedRetryMs?: number;
  readonly connectTimeoutMs?: number;
}

/**
 * Connects once to DATABASE_URL before the server starts, so that a wrong URL fails in one line
 * instead of a run of retries with stack traces. Retry policy: a wrong database name (3D000),
 * wrong password (28P01) or a refused login (28000) fail at once — retrying cannot fix them;
 * "connection refused" (a server that is still starting) is retried for a short bound.
 */
export async function checkDatabaseUrl(url: string, options: PreflightOptions = {}): Promise<void> {
  const target = describe(url);
  const deadline = Date.now() + (options.refusedRetryMs ?? 5_000);
  for (;;) {
    const client = new Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end().catch(() => undefined);
      return;
    } catch (e) {
      await client.end().catch(() => undefined);
      const err = e as { code?: string; message?: string };
      if (err.code === 'ECONNREFUSED' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      throw new DatabaseUnavailableError(explain(err, target));
    }
  }
}

interface Target {
  readonly host: string;
  readonly database: string;
  readonly user: string;
}

/** Host, database and user of the URL — never its password. */
function describe(url: string): Target {
  try {
    const u = new URL(url);
    return {
      host: `${u.hostname || 'localhost'}:${u.port || '5432'}`,
      database: decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default)',
      user: decodeURIComponent(u.username) || '(default)',
    };
  } catch {
    return { host: '(unparsable URL)', database: '?', user: '?' };
  }
}

function explain(err: { code?: string; message?: string }, t: Target): string {
  const unset = 'or unset DATABASE_URL to use the embedded PostgreSQL';
  switch (err.code ?? '') {
    case '3D000':
      return `DATABASE_URL: database "${t.database}" does not exist on ${t.host}: create it (createdb -h ${t.host.split(':')[0]} -U ${t.user} ${t.database}), fix the name in DATABASE_URL, ${unset}`;
    case '28P01':
      return `DATABASE_URL: password authentication failed for user "${t.user}" on ${t.host}: fix the user or password in DATABASE_URL ${unset}`;
    case '28000':
      return `DATABASE_URL: the server at ${t.host} refused user "${t.user}" for database "${t.database}" (${firstLine(err.message)}): fix the user in DATABASE_URL or the server's pg_hba.conf, ${unset}`;
    case 'ECONNREFUSED':
      return `DATABASE_URL: nothing accepts connections on ${t.host}: start PostgreSQL there, fix the host or port in DATABASE_URL, ${unset}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `DATABASE_URL: host of ${t.host} not found: fix the host in DATABASE_URL ${unset}`;
    default:
      return `DATABASE_URL: cannot connect to database "${t.database}" on ${t.host} as "${t.user}" (${firstLine(err.message)}): check DATABASE_URL ${unset}`;
  }
}

function firstLine(message: string | undefined): string {
  return (message ?? 'unknown error').split('\n')[0] ?? '';
}
