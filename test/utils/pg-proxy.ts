import { startTcpProxy } from './tcp-proxy';

/**
 * A TCP proxy on loopback between the server under test and PostgreSQL, that a test can cut
 * (every connection destroyed, new ones refused: the port stops listening) and restore (the
 * same port listens again), to stage a database outage without touching the database.
 */
export interface PgProxy {
  /** DATABASE_URL through the proxy. */
  readonly url: string;
  /** Connections open through the proxy now. */
  readonly open: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || '5432'));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return {
    url: url.toString(),
    get open() {
      return proxy.open;
    },
    cut: () => proxy.cut(),
    restore: () => proxy.restore(),
    close: () => proxy.close(),
  };
}
