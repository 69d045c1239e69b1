import jwt from 'jsonwebtoken';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import { graphql } from 'test/utils/oidc';

const TAGS = `query Tags($assistantId: ID!) { conversationTags(assistantId: $assistantId) { id } }`;

interface Key {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

function newKey(kid: string): Key {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    kid,
    privateKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
  };
}

function claims(issuer: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    sub: 'parley-external',
    azp: 'parley-external',
    typ: 'Bearer',
    aud: 'parley',
    iat: now,
    exp: now + 300,
    realm_access: { roles: ['Manage Conversations'] },
    ...extra,
  };
}

/** A JWKS server that counts its fetches. */
async function jwksServer(
  keys: () => Key[],
): Promise<{ server: Server; url: string; fetches: () => number }> {
  let fetches = 0;
  const server = createServer((req, res) => {
    fetches++;
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ keys: keys().map((k) => k.jwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url, fetches: () => fetches };
}

async function expectRefused(url: string, token: string, message?: RegExp): Promise<void> {
  const res = await graphql(url, token, TAGS, { assistantId: 'a' });
  expect(res.status).toBe(401);
  expect(res.body.data).toBeUndefined();
  expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED' });
  if (message) expect(res.body.errors?.[0]?.message).toMatch(message);
}

async function expectAccepted(url: string, token: string): Promise<void> {
  const res = await graphql(url, token, TAGS, { assistantId: 'a' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ data: { conversationTags: [] } });
}

describe('bearer token negatives against an external issuer (JWKS)', () => {
  const published = newKey('published');
  const attacker = newKey('attacker');
  let issuerServer: Awaited<ReturnType<typeof jwksServer>>;
  let attackerServer: Awaited<ReturnType<typeof jwksServer>>;
  let issuer: string;
  let t: TestApp;

  beforeAll(async () => {
    issuerServer = await jwksServer(() => [published]);
    attackerServer = await jwksServer(() => [
      attacker,
      { ...attacker, jwk: { ...attacker.jwk, kid: published.kid } },
    ]);
    issuer = `${issuerServer.url}/auth/realms/ext`;
    t = await startTestApp({ env: { OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: 'parley' } });
  });

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => issuerServer.server.close(resolve));
    await new Promise((resolve) => attackerServer.server.close(resolve));
  });

  const sign = (payload: Record<string, unknown>, key: Key = published, header = {}) =>
    jwt.sign(payload, key.privateKey, {
      algorithm: 'RS256',
      keyid: key.kid,
      header: { alg: 'RS256', kid: key.kid, ...header },
    });

  it('an unknown kid costs exactly one JWKS fetch, then 401', async () => {
    await expectAccepted(t.url, sign(claims(issuer)));
    const before = issuerServer.fetches();
    expect(before).toBe(1);
    await expectRefused(t.url, sign(claims(issuer), newKey('rotated-away')), /not signed by a key/);
    expect(issuerServer.fetches()).toBe(before + 1);
    // The known key is still served from the cache.
    await expectAccepted(t.url, sign(claims(issuer)));
    expect(issuerServer.fetches()).toBe(before + 1);
  });

  it('jku in the header is ignored: the attacker’s key set is never fetched', async () => {
    for (const kid of [attacker.kid, published.kid]) {
      const token = jwt.sign(claims(issuer), attacker.privateKey, {
        algorithm: 'RS256',
        header: { alg: 'RS256', kid, jku: `${attackerServer.url}/jwks.json` },
      });
      await expectRefused(t.url, token);
    }
    expect(attackerServer.fetches()).toBe(0);
  });

  it('wrong audience, wrong issuer and a token expired beyond the leeway are 401', async () => {
    await expectRefused(t.url, sign(claims(issuer, { aud: 'someone-else' })), /audience/);
    await expectRefused(t.url, sign(claims(issuer, { iss: `${issuer}-other` })), /issuer/);
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(t.url, sign(claims(issuer, { iat: now - 600, exp: now - 61 })), /expired/);
  });

  it('a token over 8 KiB is 401 even with a valid signature; just under passes', async () => {
    const padded = (length: number): string => {
      const base = sign(claims(issuer, { pad: '' })).length;
      // base64url: 4 characters per 3 bytes of claims.
      const token = sign(
        claims(issuer, { pad: 'x'.repeat(Math.floor(((length - base) * 3) / 4)) }),
      );
      return token;
    };
    const under = padded(8 * 1024 - 8);
    expect(under.length).toBeLessThanOrEqual(8 * 1024);
    await expectAccepted(t.url, under);
    const over = padded(8 * 1024 + 16);
    expect(over.length).toBeGreaterThan(8 * 1024);
    await expectRefused(t.url, over, /longer than 8192/);
  });
});
