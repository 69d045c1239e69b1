'use strict';
// Child process for bench/instances.js: a round-robin HTTP proxy (what nginx or HAProxy do in
// front of replicas) over the targets given as arguments, keep-alive on both sides, port
// reported over IPC (forkServer/serveOverIpc). Same behaviour as test/utils/round-robin-proxy.ts
// without the health checks (a bench has no failing replica).
const http = require('node:http');
const { URL } = require('node:url');
const { serveOverIpc } = require('./http-bench');

const targets = process.argv.slice(2).map((t) => new URL(t));
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
let next = 0;

const server = http.createServer((req, res) => {
  const target = targets[next++ % targets.length];
  const out = http.request(
    {
      agent,
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host },
    },
    (upstream) => {
      res.writeHead(upstream.statusCode ?? 502, upstream.headers);
      upstream.pipe(res);
    },
  );
  out.on('error', () => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () =>
  serveOverIpc({
    getHttpServer: () => server,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }),
);
