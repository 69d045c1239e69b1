import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback that a test can freeze (connections stay open but nothing is
 * forwarded either way: a hung server, without hanging the real one other tests share), thaw,
 * cut (every connection destroyed, new ones refused) and restore (the same port listens again).
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** Client connections open through the proxy now. */
  readonly open: number;
  freeze(): void;
  thaw(): void;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Listens on `listenHost` (loopback unless given: another address of this host, e.g. the root
 * end of a veth pair that a network namespace reaches it by).
 */
export async function startTcpProxy(
  upstreamHost: string,
  upstreamPort: number,
  listenHost = '127.0.0.1',
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (frozen) socket.pause();
  };
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (!to.destroyed) to.write(chunk);
    });
  };
  const onConnection = (client: Socket): void => {
    const upstream = connect(upstreamPort, upstreamHost);
    track(client);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  let server: Server = createServer(onConnection);
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, listenHost, () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
    });
  const port = await listen(0);
  return {
    host: listenHost,
    port,
    get open() {
      return sockets.size / 2;
    },
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
    },
    thaw() {
      frozen = false;
      for (const s of sockets) s.resume();
    },
    cut: stop,
    async restore() {
      server = createServer(onConnection);
      await listen(port);
    },
    close: stop,
  };
}
