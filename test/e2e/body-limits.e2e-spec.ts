import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import request from 'supertest';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

const KIB = 1024;
const MIB = 1024 * 1024;

function expect413(res: request.Response, maxBytes: number): void {
  expect(res.status).toBe(413);
  expect(res.body).toMatchObject({
    version: '1.0.0',
    status: 'failure',
    code: 413,
    details: { max_bytes: maxBytes },
  });
  expect(typeof res.body.reason).toBe('string');
  expect(res.body.message).toContain(String(maxBytes));
}

/** A REST webhook body of exactly `bytes` bytes (padding in the metadata). */
function webhookBody(bytes: number): string {
  const head = JSON.stringify({
    sender: uniqueId('limit'),
    message: '/greet',
    metadata: { p: '' },
  });
  return head.replace('"p":""', `"p":"${'x'.repeat(bytes - head.length)}"`);
}

/** Tracker events (`POST …/tracker/events`) of exactly `bytes` bytes: one slot event, padded. */
function eventsBody(bytes: number): string {
  const head = JSON.stringify([{ event: 'slot', name: 'note', value: '', timestamp: 1 }]);
  return head.replace('"value":""', `"value":"${'x'.repeat(bytes - head.length)}"`);
}

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * Streams a `total`-byte body to `path` over a raw socket (declared with Content-Length, or
 * chunked) and resolves with the answer as soon as it arrives; stops writing then.
 */
function streamBody(
  base: string,
  path: string,
  total: number,
  mode: 'declared' | 'chunked',
): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    let done = false;
    let sent = 0;
    const chunk = Buffer.alloc(64 * KIB, 0x61);
    const finish = (): void => {
      const end = answer.indexOf('\r\n\r\n');
      if (done || end < 0) return;
      done = true;
      socket.destroy();
      resolve({
        status: Number(answer.slice(9, 12)),
        headers: answer.slice(0, end).toLowerCase(),
        body: answer.slice(end + 4),
      });
    };
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      // The failure body is small: wait for its end (closing brace) before resolving.
      if (/\}\s*$/.test(answer) || /\r\n0\r\n\r\n$/.test(answer)) finish();
    });
    socket.on('close', () => {
      finish();
      if (!done) reject(new Error(`connection closed without an answer after ${sent} bytes`));
    });
    // A reset after the answer was read is expected: the server closes without reading on.
    socket.on('error', () => undefined);
    const write = (): void => {
      while (!done && sent < total) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += piece.length;
        const framed =
          mode === 'chunked'
            ? Buffer.concat([
                Buffer.from(`${piece.length.toString(16)}\r\n`),
                piece,
                Buffer.from('\r\n'),
              ])
            : piece;
        if (!socket.write(framed)) {
          socket.once('drain', write);
          return;
        }
      }
      if (!done && mode === 'chunked') socket.write('0\r\n\r\n');
    };
    socket.on('connect', () => {
      const length =
        mode === 'declared' ? `Content-Length: ${total}` : 'Transfer-Encoding: chunked';
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`,
      );
      write();
    });
  });
}

function parseFailure(raw: RawAnswer): Record<string, unknown> {
  // A chunked answer is one chunk here: take the JSON object out of it.
  return JSON.parse(raw.body.slice(raw.body.indexOf('{'), raw.body.lastIndexOf('}') + 1)) as Record<
    string,
    unknown
  >;
}

describe('request body limits per route (defaults)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('webhooks take 64 KiB, one byte more is a 413 failure body naming the limit', async () => {
    const ok = await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Content-Type', 'application/json')
      .send(webhookBody(64 * KIB));
    expect(ok.status).toBe(200);
    expect413(
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .set('Content-Type', 'application/json')
        .send(webhookBody(64 * KIB + 1)),
      64 * KIB,
    );
    expect413(
      await request(t.url)
        .post('/model/parse')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ text: 'hi', pad: 'x'.repeat(64 * KIB) })),
      64 * KIB,
    );
  });

  it('tracker events take 1 MiB: a body over the webhook limit is stored, over 1 MiB is a 413', async () => {
    const id = uniqueId('limit');
    const body = eventsBody(200 * KIB);
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .set('Content-Type', 'application/json')
      .send(body)
      .expect(200);
    const tracker = await request(t.url).get(`/conversations/${id}/tracker`).expect(200);
    const stored = (tracker.body.events as Array<{ event: string; value?: unknown }>).find(
      (e) => e.event === 'slot',
    );
    expect(typeof stored?.value === 'string' && stored.value.length > 199 * KIB).toBe(true);
    expect413(
      await request(t.url)
        .post(`/conversations/${id}/tracker/events`)
        .set('Content-Type', 'application/json')
        .send(eventsBody(MIB + 1)),
      MIB,
    );
  });

  it('training data takes more than 1 MiB by default (the route answers, not the body limit)', async () => {
    const yaml = `version: "3.1"\n# ${'x'.repeat(2 * MIB)}\nnlu: [\n`;
    const res = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send(yaml);
    expect(res.status).toBe(400);
    expect(res.body.details?.max_bytes).toBeUndefined();
  });

  it('a chunked body within the limit is read and answered', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${t.url}/webhooks/rest/webhook`,
        { method: 'POST', headers: { 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      // Two writes without a Content-Length: Node sends them chunked.
      req.write(`{"sender":"${uniqueId('chunked')}",`);
      req.end(`"message":"/greet","metadata":{"p":"${'x'.repeat(32 * KIB)}"}}`);
    });
    expect(status).toBe(200);
  });

  it('a chunked body past the limit is a 413 too', async () => {
    const raw = await streamBody(t.url, '/webhooks/rest/webhook', 4 * MIB, 'chunked');
    expect(raw.status).toBe(413);
    expect(parseFailure(raw)).toMatchObject({ status: 'failure', code: 413 });
  });
});

describe('request body limits: configurable per kind of route', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        PARLEY_BODY_LIMIT: '1mb',
        PARLEY_MESSAGE_BODY_LIMIT: '128kb',
        PARLEY_TRACKER_BODY_LIMIT: '256kb',
      },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('each route kind answers 413 past its own configured limit', async () => {
    const ok = await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Content-Type', 'application/json')
      .send(webhookBody(100 * KIB));
    expect(ok.status).toBe(200);
    expect413(
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .set('Content-Type', 'application/json')
        .send(webhookBody(128 * KIB + 1)),
      128 * KIB,
    );
    expect413(
      await request(t.url)
        .post(`/conversations/${uniqueId('limit')}/tracker/events`)
        .set('Content-Type', 'application/json')
        .send(eventsBody(256 * KIB + 1)),
      256 * KIB,
    );
    expect413(
      await request(t.url)
        .post('/model/train')
        .set('Content-Type', 'application/x-yaml')
        .send(`version: "3.1"\n# ${'x'.repeat(MIB)}\n`),
      MIB,
    );
  });
});

/** process_resident_memory_bytes of a server, from its own /metrics. */
async function rssOf(server: CliServer): Promise<number> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const m = /^process_resident_memory_bytes (\S+)$/m.exec(text);
  if (m === null) throw new Error('no process_resident_memory_bytes in /metrics');
  return Number(m[1]);
}

describe('a 100 MB body to a 64 KiB route', () => {
  let server: CliServer;

  beforeAll(async () => {
    server = await startCliServer(['--enable-api'], {
      ...process.env,
      LOG_LEVEL: 'warn',
      PARLEY_NODE_FLAGS: 'none',
    });
  }, 60_000);

  afterAll(async () => {
    if (server?.running()) await server.stop();
  });

  it('is refused with 413 before it is read, and costs the server < 5 MB of memory', async () => {
    // Warm the paths involved (parsing, the error handler, the metrics) before the baseline.
    for (let i = 0; i < 3; i++) {
      await streamBody(server.base, '/webhooks/rest/webhook', 256 * KIB, 'declared');
      await rssOf(server);
    }
    const before = await rssOf(server);
    for (const mode of ['declared', 'chunked'] as const) {
      const raw = await streamBody(server.base, '/webhooks/rest/webhook', 100 * 1000 * 1000, mode);
      expect(raw.status).toBe(413);
      expect(parseFailure(raw)).toMatchObject({
        status: 'failure',
        code: 413,
        details: { max_bytes: 64 * KIB },
      });
    }
    const after = await rssOf(server);
    expect(after - before).toBeLessThan(5 * 1000 * 1000);
    // The server still serves.
    expect((await fetch(`${server.base}/health/ready`)).status).toBe(200);
  }, 120_000);
});
