import { connect, createServer, type Server, type Socket } from 'node:net';

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
  const upstreamPort = Number(target.port || '5432');
  const upstreamHost = target.hostname;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const onConnection = (client: Socket): void => {
    const upstream = connect(upstreamPort, upstreamHost);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  let server: Server = createServer(onConnection);
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  const port = await listen(0);
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    get open() {
      return sockets.size / 2;
    },
    cut: stop,
    async restore() {
      server = createServer(onConnection);
      await listen(port);
    },
    close: stop,
  };
}
