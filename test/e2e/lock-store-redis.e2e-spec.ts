import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Histogram } from 'prom-client';
import { metricsRegistry } from 'src/platform/metrics/registry';
import request from 'supertest';
import { MOODBOT, startAppWithModel, trainBot } from 'test/utils/bots';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { describeWithRedis, uniqueKeyPrefix } from 'test/utils/redis';
import { startTcpProxy, type TcpProxy } from 'test/utils/tcp-proxy';

/**
 * `lock_store: type: concurrent_redis` in endpoints.yml, over HTTP: two Parley instances on one
 * database and one Redis take turns on one conversation without losing or interleaving a turn;
 * with Redis unreachable or hung, a message fails closed with 503, Retry-After and the failure
 * body within socket_timeout + 1 s, nothing of it is stored, and turns work again once Redis
 * is back, without a restart.
 */

interface TrackerEvent {
  event: string;
  text?: string;
  name?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'parley-redis-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An endpoints.yml whose lock store is the test Redis (db of its URL) at host:port. */
function endpoints(
  name: string,
  redisUrl: string,
  host: string,
  port: number,
  socketTimeout: number,
): string {
  const db = new URL(redisUrl).pathname.slice(1) || '0';
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      'lock_store:',
      '  type: concurrent_redis',
      `  url: ${host}`,
      `  port: ${port}`,
      `  db: ${db}`,
      `  key_prefix: ${uniqueKeyPrefix('e2e')}`,
      `  socket_timeout: ${socketTimeout}`,
      '',
    ].join('\n'),
  );
  return file;
}

async function redisWaits(): Promise<number> {
  const metric = metricsRegistry.getSingleMetric('parley_lock_wait_seconds') as
    Histogram | undefined;
  const values = (await metric?.get())?.values ?? [];
  return (
    values.find(
      (v) => v.metricName === 'parley_lock_wait_seconds_count' && v.labels.store === 'redis',
    )?.value ?? 0
  );
}

async function events(app: TestApp, id: string): Promise<TrackerEvent[]> {
  const res = await request(app.url).get(`/conversations/${id}/tracker?include_events=ALL`);
  expect(res.status).toBe(200);
  return res.body.events as TrackerEvent[];
}

describeWithRedis('lock_store: concurrent_redis over HTTP', (redis) => {
  jest.setTimeout(60_000);

  describe('two instances, one Redis', () => {
    let a: TestApp;
    let b: TestApp;

    beforeAll(async () => {
      const file = endpoints('two.yml', redis().url, redis().host, redis().port, 5);
      // The trained mood bot: every turn ends with action_listen, so a turn is visible whole.
      const models = trainBot(MOODBOT, join(dir, 'models'));
      const env = { PARLEY_ENDPOINTS: file, LOCK_STORE: 'memory' };
      [a, b] = await Promise.all([
        startAppWithModel(models, { env }),
        startAppWithModel(models, { env }),
      ]);
    }, 180_000);
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
    });

    it('stores 20 concurrent messages to one conversation, each turn whole and in order', async () => {
      const before = await redisWaits();
      const id = uniqueId('redis-burst');
      const texts = Array.from({ length: 20 }, (_, i) => `hello number ${i}`);
      const statuses = await Promise.all(
        texts.map((message, i) =>
          request((i % 2 === 0 ? a : b).url)
            .post('/webhooks/rest/webhook')
            .send({ sender: id, message })
            .then((r) => r.status),
        ),
      );
      expect(statuses).toEqual(texts.map(() => 200));
      const stored = await events(a, id);
      const users = stored.filter((e) => e.event === 'user').map((e) => e.text);
      expect([...users].sort()).toEqual([...texts].sort());
      // Each turn is whole: a user message, then its turn's actions up to action_listen, then
      // the next user message — never two user messages without the listen between them.
      const shape = stored
        .filter((e) => e.event === 'user' || (e.event === 'action' && e.name === 'action_listen'))
        .map((e) => (e.event === 'user' ? 'U' : 'L'))
        .join('');
      expect(shape.replace(/^L+/, '')).toBe('UL'.repeat(20));
      // The turns went through the Redis lock store.
      expect((await redisWaits()) - before).toBeGreaterThanOrEqual(20);
    });

    it('holds the same conversation turn by turn across both instances as on one instance', async () => {
      // Round-robin: each instance's cached session is one turn behind; it takes the other's
      // turn from what the lock hands over, and must answer as one instance does.
      const script = ['hello there', 'I am very sad', 'yes it did', 'hi', 'wonderful', 'bye'];
      const talk = async (id: string, via: (i: number) => TestApp): Promise<string[]> => {
        const answers: string[] = [];
        for (const [i, message] of [...script, ...script].entries()) {
          const res = await request(via(i).url)
            .post('/webhooks/rest/webhook')
            .send({ sender: id, message });
          expect(res.status).toBe(200);
          answers.push((res.body as Array<{ text?: string }>).map((m) => m.text ?? '').join('|'));
        }
        return answers;
      };
      const alone = uniqueId('redis-alone');
      const shared = uniqueId('redis-rr');
      const expected = await talk(alone, () => a);
      expect(await talk(shared, (i) => (i % 2 === 0 ? a : b))).toEqual(expected);
      const shape = (list: TrackerEvent[]): string[] =>
        list.map((e) => `${e.event}:${e.name ?? e.text ?? ''}`);
      const fromA = await events(a, shared);
      expect(shape(await events(b, shared))).toEqual(shape(fromA));
      expect(shape(fromA)).toEqual(shape(await events(a, alone)));
    });
  });

  describe('Redis down or hung', () => {
    let app: TestApp;
    let proxy: TcpProxy;
    const socketTimeout = 1;

    beforeAll(async () => {
      proxy = await startTcpProxy(redis().host, redis().port);
      const file = endpoints('proxy.yml', redis().url, proxy.host, proxy.port, socketTimeout);
      app = await startTestApp({ env: { PARLEY_ENDPOINTS: file } });
    });
    afterAll(async () => {
      await app?.close();
      await proxy?.close();
    });

    const send = (id: string, message: string) =>
      request(app.url).post('/webhooks/rest/webhook').send({ sender: id, message });

    const expectFailedClosed = (res: request.Response): void => {
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toMatchObject({
        status: 'failure',
        code: 503,
        reason: 'LockError',
        details: { retry_after: 1 },
      });
      expect(res.body.message).toContain('lock store is unavailable');
    };

    it('answers 503 with Retry-After while Redis is unreachable, then serves again', async () => {
      const id = uniqueId('redis-down');
      expect((await send(id, 'before')).status).toBe(200);
      await proxy.cut();
      try {
        expectFailedClosed(await send(id, 'during the outage'));
      } finally {
        await proxy.restore();
      }
      let after = await send(id, 'after');
      for (let i = 0; i < 50 && after.status === 503; i++) {
        await new Promise((r) => setTimeout(r, 100));
        after = await send(id, 'after');
      }
      expect(after.status).toBe(200);
      const users = (await events(app, id)).filter((e) => e.event === 'user').map((e) => e.text);
      expect(users).toEqual(['before', 'after']);
    });

    it('answers 503 within socket_timeout + 1 s while Redis hangs, then serves again', async () => {
      const id = uniqueId('redis-hang');
      expect((await send(id, 'before')).status).toBe(200);
      proxy.freeze();
      let res: request.Response;
      const started = Date.now();
      try {
        res = await send(id, 'while Redis hangs');
      } finally {
        proxy.thaw();
      }
      expect(Date.now() - started).toBeLessThan(socketTimeout * 1000 + 1000);
      expectFailedClosed(res);
      expect((await send(id, 'after')).status).toBe(200);
      const users = (await events(app, id)).filter((e) => e.event === 'user').map((e) => e.text);
      expect(users).toEqual(['before', 'after']);
    });
  });
});
