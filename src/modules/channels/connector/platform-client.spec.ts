import { createServer, type Server } from 'node:http';
import { PlatformClient, retryAfterMs } from './platform-client';
import { safeEqual } from './signature';

interface Seen {
  path: string;
  body: string;
}

/** A local HTTP server answering each request with the next of `answers`. */
async function server(
  answers: Array<{ status: number; headers?: Record<string, string>; body: string } | 'hang'>,
): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const s: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body });
      const answer = answers.shift() ?? { status: 200, body: '{}' };
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const address = s.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('0.5')).toBe(500);
    const now = Date.parse('2026-11-28T00:00:00Z');
    expect(retryAfterMs('Sat, 28 Nov 2026 00:00:03 GMT', now)).toBe(3000);
    expect(retryAfterMs('Fri, 27 Nov 2026 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });
});

describe('safeEqual', () => {
  it('is equality of strings, whatever their lengths', () => {
    expect(safeEqual('v0=abc', 'v0=abc')).toBe(true);
    expect(safeEqual('v0=abc', 'v0=abd')).toBe(false);
    expect(safeEqual('v0=ab', 'v0=abc')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});

describe('PlatformClient', () => {
  it('posts JSON below the base URL with its headers and query, and returns the JSON answer', async () => {
    const api = await server([{ status: 200, body: '{"ok":true}' }]);
    try {
      const client = new PlatformClient({ name: 't', baseUrl: `${api.url}/api`, timeoutMs: 2000 });
      const answer = await client.call({ path: '/x.y', query: { a: 'b' }, json: { k: 1 } });
      expect(answer).toEqual({ ok: true, status: 200, body: { ok: true } });
      expect(api.seen).toEqual([{ path: '/api/x.y?a=b', body: '{"k":1}' }]);
    } finally {
      await api.close();
    }
  });

  it('posts a form body, a list value repeating its field', async () => {
    const api = await server([{ status: 201, body: '{"sid":"SM1"}' }]);
    try {
      const client = new PlatformClient({ name: 't', baseUrl: api.url, timeoutMs: 2000 });
      const answer = await client.call({
        path: '/Messages.json',
        form: { To: '+1 415', MediaUrl: ['https://x.example/a.png', 'https://x.example/b.png'] },
      });
      expect(answer).toEqual({ ok: true, status: 201, body: { sid: 'SM1' } });
      expect(api.seen).toEqual([
        {
          path: '/Messages.json',
          body: 'To=%2B1+415&MediaUrl=https%3A%2F%2Fx.example%2Fa.png&MediaUrl=https%3A%2F%2Fx.example%2Fb.png',
        },
      ]);
    } finally {
      await api.close();
    }
  });

  it('retries a 429 after its Retry-After, then returns the answer', async () => {
    const api = await server([
      { status: 429, headers: { 'Retry-After': '0' }, body: '{"ok":false}' },
      { status: 200, body: '{"ok":true}' },
    ]);
    try {
      const client = new PlatformClient({ name: 't', baseUrl: api.url, timeoutMs: 2000 });
      expect((await client.call({ path: '/m', json: {} })).ok).toBe(true);
      expect(api.seen).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it('takes the retry hint from the body when there is no header, and gives up after maxRetries', async () => {
    const limited = { status: 429, body: '{"ok":false,"parameters":{"retry_after":0}}' };
    const api = await server([limited, limited, limited]);
    try {
      const client = new PlatformClient({
        name: 't',
        baseUrl: api.url,
        timeoutMs: 2000,
        maxRetries: 2,
        retryAfterOf: (b) => (b as { parameters: { retry_after: number } }).parameters.retry_after,
      });
      const answer = await client.call({ path: '/m', json: {} });
      expect(answer.status).toBe(429);
      expect(api.seen).toHaveLength(3);
    } finally {
      await api.close();
    }
  });

  it('does not wait out a Retry-After longer than the limit', async () => {
    const api = await server([{ status: 429, headers: { 'Retry-After': '3600' }, body: '{}' }]);
    try {
      const client = new PlatformClient({ name: 't', baseUrl: api.url, timeoutMs: 2000 });
      expect((await client.call({ path: '/m', json: {} })).status).toBe(429);
      expect(api.seen).toHaveLength(1);
    } finally {
      await api.close();
    }
  });

  it('answers ok: false with status 0 when the platform does not answer in time', async () => {
    const api = await server(['hang']);
    try {
      const client = new PlatformClient({ name: 't', baseUrl: api.url, timeoutMs: 100 });
      const answer = await client.call({ path: '/m', json: {} });
      expect(answer.ok).toBe(false);
      expect(answer.status).toBe(0);
    } finally {
      await api.close();
    }
  });
});
