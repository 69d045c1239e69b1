import jwt from 'jsonwebtoken';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { startTestApp, testDomain, uniqueId, type TestApp } from 'test/utils/create-test-app';

const NOT_AUTHENTICATED = {
  version: '1.0.0',
  status: 'failure',
  message: 'User is not authenticated.',
  reason: 'NotAuthenticated',
  details: {},
  help: null,
  code: 401,
};
const NOT_AUTHORIZED = {
  version: '1.0.0',
  status: 'failure',
  message: 'User has insufficient permissions.',
  reason: 'NotAuthorized',
  details: {},
  help: 'https://rasa.com/docs/rasa/user-guide/configuring-http-api/#security-considerations',
  code: 403,
};

function unsigned(payload: object): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
}

describe('REST authentication', () => {
  describe('with no auth configured', () => {
    let t: TestApp;
    beforeAll(async () => (t = await startTestApp()));
    afterAll(() => t.close());

    it('leaves every route open', async () => {
      await request(t.url).get('/status').expect(200);
      await request(t.url).get(`/conversations/${uniqueId()}/tracker`).expect(200);
    });
  });

  describe('with an auth token', () => {
    let t: TestApp;
    beforeAll(async () => (t = await startTestApp({ env: { PARLEY_AUTH_TOKEN: 's3cret' } })));
    afterAll(() => t.close());

    it('refuses a request without or with a wrong token, before the model check', async () => {
      const none = await request(t.url).get('/status').expect(401);
      expect(none.body).toEqual(NOT_AUTHENTICATED);
      const wrong = await request(t.url).get('/status?token=guess').expect(401);
      expect(wrong.body).toEqual(NOT_AUTHENTICATED);
      t.registry.unload();
      try {
        await request(t.url).get('/status').expect(401);
      } finally {
        t.registry.load({ domain: testDomain(), modelId: 'm', modelFile: null, assistantId: null });
      }
    });

    it('accepts the right token', async () => {
      await request(t.url).get('/status?token=s3cret').expect(200);
      await request(t.url)
        .post(`/conversations/${uniqueId()}/tracker/events?token=s3cret`)
        .send({ event: 'pause' })
        .expect(200);
    });

    it('keeps GET /, GET /version and health open', async () => {
      await request(t.url).get('/').expect(200);
      await request(t.url).get('/version').expect(200);
      await request(t.url).get('/health/ready').expect(200);
    });
  });

  describe('with an HS256 JWT secret', () => {
    let t: TestApp;
    const secret = 'core';
    const admin = jwt.sign({ user: { username: 'testadmin', role: 'admin' } }, secret, {
      algorithm: 'HS256',
    });
    const user = jwt.sign({ user: { username: 'testuser', role: 'user' } }, secret, {
      algorithm: 'HS256',
    });
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

    beforeAll(
      async () => (t = await startTestApp({ env: { JWT_SECRET: secret, JWT_METHOD: 'HS256' } })),
    );
    afterAll(() => t.close());

    it('lets an admin read any conversation and the status', async () => {
      await request(t.url).get('/conversations/testadmin/tracker').set(bearer(admin)).expect(200);
      await request(t.url).get('/conversations/testuser/tracker').set(bearer(admin)).expect(200);
      await request(t.url).get('/status').set(bearer(admin)).expect(200);
    });

    it('lets a user read only the conversation named after them', async () => {
      await request(t.url).get('/conversations/testuser/tracker').set(bearer(user)).expect(200);
      const other = await request(t.url)
        .get('/conversations/testadmin/tracker')
        .set(bearer(user))
        .expect(403);
      expect(other.body).toEqual(NOT_AUTHORIZED);
      const status = await request(t.url).get('/status').set(bearer(user)).expect(403);
      expect(status.body).toEqual(NOT_AUTHORIZED);
    });

    it('refuses a token with another role or no role', async () => {
      const guest = jwt.sign({ user: { username: 'x', role: 'guest' } }, secret);
      await request(t.url).get('/conversations/x/tracker').set(bearer(guest)).expect(403);
      const bare = jwt.sign({ sub: 'x' }, secret);
      await request(t.url).get('/conversations/x/tracker').set(bearer(bare)).expect(403);
    });

    it.each([
      ['no token', null],
      [
        'a bad signature',
        jwt.sign({ user: { username: 'testadmin', role: 'admin' } }, 'other-secret'),
      ],
      ['alg none', unsigned({ user: { username: 'testadmin', role: 'admin' } })],
      [
        'an expired token',
        jwt.sign(
          {
            user: { username: 'testadmin', role: 'admin' },
            exp: Math.floor(Date.now() / 1000) - 60,
          },
          secret,
        ),
      ],
      ['garbage', 'not.a.jwt'],
    ])('refuses %s with 401', async (_what, token) => {
      const req = request(t.url).get('/conversations/testadmin/tracker');
      const res = await (token === null ? req : req.set(bearer(token))).expect(401);
      expect(res.body).toEqual(NOT_AUTHENTICATED);
    });
  });

  describe('with an RS256 public key', () => {
    let t: TestApp;
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

    beforeAll(
      async () => (t = await startTestApp({ env: { JWT_SECRET: publicPem, JWT_METHOD: 'RS256' } })),
    );
    afterAll(() => t.close());

    it('accepts a token signed with the private key', async () => {
      const token = jwt.sign({ user: { username: 'a', role: 'admin' } }, privateKey, {
        algorithm: 'RS256',
      });
      await request(t.url).get('/status').set('Authorization', `Bearer ${token}`).expect(200);
    });

    it('refuses an HS256 token signed with the public key (algorithm confusion)', async () => {
      const forged = forgeHs256({ user: { username: 'a', role: 'admin' } }, publicPem);
      const res = await request(t.url)
        .get('/status')
        .set('Authorization', `Bearer ${forged}`)
        .expect(401);
      expect(res.body).toEqual(NOT_AUTHENTICATED);
    });
  });
});

/** jsonwebtoken refuses to sign HS256 with a PEM key, so the attacker's token is built by hand. */
function forgeHs256(payload: object, key: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
  return `${head}.${createHmac('sha256', key).update(head).digest('base64url')}`;
}
