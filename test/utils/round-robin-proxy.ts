import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';

/** A load balancer for tests: HTTP requests to `url` go to the targets in turn. */
export interface RoundRobinProxy {
  readonly url: string;
  /** Requests forwarded per target (same order as the targets). */
  readonly forwarded: number[];
  /** Whether each target is taking requests (false once it failed, until its health check passes). */
  readonly up: boolean[];
  close(): Promise<void>;
}

/**
 * A tiny round-robin HTTP proxy on 127.0.0.1 (what nginx or HAProxy do in front of replicas).
 * Like HAProxy's `retries` + `redispatch`, a request whose target refuses the connection (a
 * stopped replica) goes to the next target; a reset or any other failure once the request may
 * have reached the target answers 503, so the client never takes a lost request for an
 * answered one. A target that failed takes no requests until `healthPath` answers 200 again
 * (checked every `checkMs`). With `probeAll`, targets that are up are probed too, as a
 * Kubernetes readiness probe does: one that answers anything but 200 takes no new requests.
 */
export async function startRoundRobinProxy(
  targets: readonly string[],
  { healthPath = '/health/ready', checkMs = 500, probeAll = false } = {},
): Promise<RoundRobinProxy> {
  // `timeout` set, Node's agent honours the replicas' `Keep-Alive: timeout=5` hint: an idle
  // socket is dropped a second before the replica would close it, so a request never races a
  // keep-alive close (a reset the proxy could not tell from a replica dying mid-request).
  const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 60_000 });
  const forwarded = targets.map(() => 0);
  const up = targets.map(() => true);
  let next = 0;
  const pick = (): number => {
    for (let i = 0; i < targets.length; i++) {
      const index = next++ % targets.length;
      if (up[index]) return index;
    }
    return next++ % targets.length;
  };
  const checks = setInterval(() => {
    targets.forEach((target, index) => {
      if (up[index] && !probeAll) return;
      void fetch(new URL(healthPath, target))
        .then((res) => (up[index] = res.status === 200))
        .catch(() => undefined);
    });
  }, checkMs);

  const forward = (
    req: IncomingMessage,
    body: Buffer,
    attempt: number,
    reply: (status: number, headers: IncomingMessage['headers'], res?: IncomingMessage) => void,
  ): void => {
    const index = pick();
    const target = new URL(targets[index] ?? '');
    const out = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host, 'content-length': String(body.length) },
      },
      (res) => {
        forwarded[index] = (forwarded[index] ?? 0) + 1;
        reply(res.statusCode ?? 502, res.headers, res);
      },
    );
    out.on('error', (e: NodeJS.ErrnoException) => {
      up[index] = false;
      // A reset may come after the request reached the target: only refused ones are retried.
      if (e.code === 'ECONNREFUSED' && attempt < targets.length) {
        forward(req, body, attempt + 1, reply);
      } else {
        reply(503, {});
      }
    });
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      forward(req, Buffer.concat(chunks), 1, (status, headers, upstream) => {
        if (upstream === undefined) {
          res.writeHead(status, { 'content-type': 'text/plain' }).end('no target answered');
          return;
        }
        res.writeHead(status, headers);
        upstream.pipe(res);
        upstream.on('error', () => res.destroy());
      });
    });
  });
  // Idle client connections stay open 65 s, as a cloud load balancer's do (fetch reads the
  // Keep-Alive hint and lets them go a little earlier). With Node's 5 s, a pause of 4–5 s
  // between requests (the test reading the database between runs) could race a request
  // against the proxy's close: no answer, which the tests count as a lost message.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    up,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(checks);
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
