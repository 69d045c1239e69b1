import { Redis } from 'ioredis';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const post = (t: TestApp, sender: string) =>
  request(t.url).post('/webhooks/rest/webhook').send({ sender, message: '/greet' });

/** Rate limits of the message routes (@nestjs/throttler), counters in a real Redis. */
describe('rate limits shared through Redis', () => {
  const prefix = `${uniqueId('parley-rl-test')}:`;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    const env = {
      REDIS_URL,
      RATE_LIMIT_CLIENT: '5',
      RATE_LIMIT_WINDOW_MS: '60000',
      RATE_LIMIT_PREFIX: prefix,
    };
    one = await startTestApp({ env });
    two = await startTestApp({ env });
  }, 60_000);

  afterAll(async () => {
    await one?.close();
    await two?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`*${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('two instances share one per-client budget; the next request is 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await post(i % 2 === 0 ? one : two, uniqueId('rl'));
      statuses.push(res.status);
      if (res.status === 200) {
        expect(res.headers['x-ratelimit-limit-client']).toBe('5');
        expect(res.headers['x-ratelimit-remaining-client']).toBe(String(4 - i));
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);

    const limited = await post(two, uniqueId('rl')).expect(429);
    expect(limited.body).toMatchObject({
      version: expect.any(String),
      status: 'failure',
      reason: 'TooManyRequests',
      code: 429,
      message: expect.stringContaining('Too many requests'),
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-limit']).toBe('5');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('health and other routes are never limited', async () => {
    await request(one.url).get('/webhooks/rest/').expect(200);
    await request(one.url).get('/').expect(200);
    await request(two.url).get('/version').expect(200);
  });
});

describe('rate limit per conversation, in memory without Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { RATE_LIMIT_CONVERSATION: '2', RATE_LIMIT_WINDOW_MS: '60000' },
    });
  }, 60_000);
  afterAll(async () => t?.close());

  it('a sender gets its budget; another sender is not affected', async () => {
    const a = uniqueId('rl-a');
    await post(t, a).expect(200);
    await post(t, a).expect(200);
    const limited = await post(t, a).expect(429);
    expect(limited.body).toMatchObject({ status: 'failure', code: 429 });
    await post(t, uniqueId('rl-b')).expect(200);
  });

  it('counts the conversation routes under the same conversation id', async () => {
    const c = uniqueId('rl-c');
    const add = () =>
      request(t.url).post(`/conversations/${c}/messages`).send({ text: 'hi', sender: 'user' });
    await add().expect(200);
    await add().expect(200);
    await add().expect(429);
    await request(t.url).get(`/conversations/${c}/tracker`).expect(429);
  });
});

describe('rate limit per client: the verified token subject, else the address', () => {
  const secret = 'rate-limit-secret';
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        JWT_SECRET: secret,
        JWT_METHOD: 'HS256',
        RATE_LIMIT_CLIENT: '2',
        RATE_LIMIT_WINDOW_MS: '60000',
      },
    });
  }, 60_000);
  afterAll(async () => t?.close());

  const asAdmin = (name: string) =>
    `Bearer ${jwt.sign({ user: { username: name, role: 'admin' } }, secret)}`;

  it('two token holders on one address each get their own budget', async () => {
    const c = uniqueId('rl-jwt');
    await request(t.url)
      .post(`/conversations/${c}/tracker/events`)
      .set('Authorization', asAdmin('ann'))
      .send({ event: 'action', name: 'action_listen' })
      .expect(200);
    const get = (who: string) =>
      request(t.url).get(`/conversations/${c}/tracker`).set('Authorization', asAdmin(who));
    await get('ann').expect(200);
    await get('ann').expect(429);
    await get('bob').expect(200);
    await get('bob').expect(200);
    await get('bob').expect(429);
  });
});

describe('rate limits off by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  }, 60_000);
  afterAll(async () => t?.close());

  it('no limit and no rate limit headers', async () => {
    const sender = uniqueId('rl');
    for (let i = 0; i < 30; i++) {
      const res = await post(t, sender).expect(200);
      expect(res.headers['x-ratelimit-limit-client']).toBeUndefined();
    }
  });
});

describe('one client budget held across two instances under concurrent load', () => {
  const prefix = `${uniqueId('parley-rl-load')}:`;
  const LIMIT = 30;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    const env = {
      REDIS_URL,
      RATE_LIMIT_CLIENT: String(LIMIT),
      RATE_LIMIT_WINDOW_MS: '60000',
      RATE_LIMIT_PREFIX: prefix,
    };
    one = await startTestApp({ env });
    two = await startTestApp({ env });
  }, 60_000);

  afterAll(async () => {
    await one?.close();
    await two?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`*${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('3× the budget at once over both instances: within ±10 % of the budget pass, the rest 429', async () => {
    const results = await Promise.all(
      Array.from({ length: 3 * LIMIT }, (_, i) => post(i % 2 === 0 ? one : two, uniqueId('rl'))),
    );
    const passed = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(passed.length + limited.length).toBe(results.length);
    expect(passed.length).toBeGreaterThanOrEqual(Math.floor(LIMIT * 0.9));
    expect(passed.length).toBeLessThanOrEqual(Math.ceil(LIMIT * 1.1));
    for (const res of limited) {
      expect(res.body).toMatchObject({ status: 'failure', code: 429, reason: 'TooManyRequests' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
    }
  });

  it('with the budget spent, health and metrics still answer on both instances', async () => {
    await post(one, uniqueId('rl')).expect(429);
    for (const t of [one, two]) {
      await request(t.url).get('/health/live').expect(200);
      await request(t.url).get('/health/ready').expect(200);
      const metrics = await request(t.url).get('/metrics').expect(200);
      expect(metrics.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });
});
