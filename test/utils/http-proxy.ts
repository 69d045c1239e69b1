import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

/** What a test proxy was asked: a CONNECT tunnel (`host:port`) or a forwarded absolute URL. */
export interface ProxiedRequest {
  readonly method: string;
  readonly target: string;
  readonly authorization: string | null;
}

/**
 * A real HTTP proxy on loopback for tests of clients that must go through one: it tunnels
 * `CONNECT host:port` and forwards absolute-form requests (`GET http://host/path`), recording
 * each. With `credentials` (`user:password`), a request without that `Proxy-Authorization:
 * Basic …` is answered 407, as proxies do.
 */
export interface TestHttpProxy {
  readonly url: string;
  readonly requests: ProxiedRequest[];
  close(): Promise<void>;
}

export async function startHttpProxy(credentials: string | null = null): Promise<TestHttpProxy> {
  const requests: ProxiedRequest[] = [];
  const expected =
    credentials === null ? null : `Basic ${Buffer.from(credentials).toString('base64')}`;
  const sockets = new Set<Socket>();
  const allowed = (auth: string | undefined): boolean => expected === null || auth === expected;

  const server: Server = createServer((req, res) => {
    const auth = req.headers['proxy-authorization'] ?? null;
    requests.push({ method: req.method ?? '', target: req.url ?? '', authorization: auth });
    if (!allowed(auth ?? undefined)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const auth = req.headers['proxy-authorization'] ?? null;
    requests.push({ method: 'CONNECT', target: req.url ?? '', authorization: auth });
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (!allowed(auth ?? undefined)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
