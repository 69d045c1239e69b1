import jwt from 'jsonwebtoken';
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';

const TAGS = `query Tags($assistantId: ID!) { conversationTags(assistantId: $assistantId) { id } }`;
const RAW = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id tags { id } } }
}`;
const DELETE = `mutation Delete($input: DeleteConversationsInput!) { deleteConversations(input: $input) }`;

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function keyOf(idp: TestIdp, kty: 'RSA' | 'EC'): { key: KeyObject; kid: string } {
  const jwk = idp.keys.find((k) => k.kty === kty);
  if (!jwk) throw new Error(`no ${kty} key`);
  return { key: createPrivateKey({ key: jwk, format: 'jwk' }), kid: jwk.kid as string };
}

/** Keycloak-shaped claims of a service account with the role. */
function claims(issuer: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    sub: 'parley-external',
    azp: 'parley-external',
    typ: 'Bearer',
    aud: 'account',
    iat: now,
    exp: now + 300,
    realm_access: { roles: ['Manage Conversations'] },
    ...extra,
  };
}

function expectUnauthenticated(res: Awaited<ReturnType<typeof graphql>>, message?: RegExp): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  expect(res.body.data).toBeUndefined();
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'UNAUTHENTICATED' });
  if (message) expect(res.body.errors?.[0]?.message).toMatch(message);
  expect(JSON.stringify(res.body)).not.toMatch(/stack|originalError|jwt |jsonwebtoken/);
}

describe('GraphQL authentication (OpenID Connect bearer tokens)', () => {
  let idp: TestIdp;
  let t: TestApp;
  let strict: TestApp;

  beforeAll(async () => {
    idp = await startTestIdp();
    t = await startTestApp({ env: { OIDC_ISSUER_URL: idp.issuer } });
    strict = await startTestApp({
      env: {
        OIDC_ISSUER_URL: idp.issuer,
        OIDC_AUDIENCE: 'parley-api',
        OIDC_ROLE_CLIENTS: 'some-other-client',
        GRAPHQL_MAX_DEPTH: '2',
        GRAPHQL_MAX_COMPLEXITY: '60',
        GRAPHQL_INTROSPECTION: 'false',
      },
    });
  });

  afterAll(async () => {
    await t?.close();
    await strict?.close();
    await idp?.close();
  });

  const ok = async (app: TestApp, token: string) => {
    const res = await graphql(app.url, token, TAGS, { assistantId: 'a' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { conversationTags: [] } });
  };

  it('accepts a client-credentials token of the embedded provider, fetched over HTTP', async () => {
    await ok(t, await fetchToken(idp));
  });

  it('the provider refuses a wrong client secret', async () => {
    await expect(fetchToken(idp, 'parley-external', 'wrong')).rejects.toThrow(
      /401.*invalid_client/,
    );
  });

  it('refuses a request without a token with 401 UNAUTHENTICATED before the operation runs', async () => {
    const id = uniqueId('auth');
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send({ event: 'slot', name: 'mood', value: 'great' })
      .expect(200);
    const res = await graphql(t.url, null, DELETE, { input: { conversationIds: [id] } });
    expectUnauthenticated(res, /Missing bearer token/);
    await request(t.url).get(`/conversations/${id}/story`).expect(200);
    await request(t.url).delete(`/conversations/${id}/tracker`).expect(204); // it was still there

    // Even an unparsable document gets 401, not a parse error: nothing is looked at first.
    expectUnauthenticated(await graphql(t.url, null, '{ nope'));
    // A token in the query string is not a bearer token.
    const token = await fetchToken(idp);
    const viaQuery = await fetch(`${t.url}/api/graphql?access_token=${token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: TAGS, variables: { assistantId: 'a' } }),
    });
    expect(viaQuery.status).toBe(401);
  });

  it('refuses malformed, tampered, expired, foreign-issuer, alg none and HS256-confusion tokens', async () => {
    const rsa = keyOf(idp, 'RSA');
    const sign = (payload: Record<string, unknown>) =>
      jwt.sign(payload, rsa.key, { algorithm: 'RS256', keyid: rsa.kid });
    const good = sign(claims(idp.issuer));
    await ok(t, good);

    expectUnauthenticated(await graphql(t.url, 'not-a-jwt', TAGS, { assistantId: 'a' }), /invalid/);
    const [h, p, s] = good.split('.') as [string, string, string];
    const tampered = `${h}.${b64({ ...claims(idp.issuer), azp: 'intruder' })}.${s}`;
    expectUnauthenticated(await graphql(t.url, tampered, TAGS, { assistantId: 'a' }));
    expectUnauthenticated(await graphql(t.url, `${h}.${p}.`, TAGS, { assistantId: 'a' }));

    const now = Math.floor(Date.now() / 1000);
    const expired = sign(claims(idp.issuer, { iat: now - 400, exp: now - 60 }));
    expectUnauthenticated(await graphql(t.url, expired, TAGS, { assistantId: 'a' }), /expired/);
    // 30 s clock tolerance: 10 s past exp still passes.
    await ok(t, sign(claims(idp.issuer, { iat: now - 310, exp: now - 10 })));
    const notYet = sign(claims(idp.issuer, { nbf: now + 120 }));
    expectUnauthenticated(await graphql(t.url, notYet, TAGS, { assistantId: 'a' }));

    for (const iss of [
      `${idp.issuer}/`,
      'http://evil.example/auth/realms/parley-test',
      idp.issuer.replace('parley-test', 'other'),
    ]) {
      const foreign = sign(claims(idp.issuer, { iss }));
      expectUnauthenticated(await graphql(t.url, foreign, TAGS, { assistantId: 'a' }), /issuer/);
    }

    const none = `${b64({ alg: 'none', typ: 'JWT', kid: rsa.kid })}.${b64(claims(idp.issuer))}.`;
    expectUnauthenticated(await graphql(t.url, none, TAGS, { assistantId: 'a' }));

    // Algorithm confusion: HS256 keyed with the provider's public key, as PEM and as JWK text.
    const publicPem = createPublicKey(rsa.key).export({ type: 'spki', format: 'pem' }) as string;
    for (const secret of [
      publicPem,
      JSON.stringify(createPublicKey(rsa.key).export({ format: 'jwk' })),
    ]) {
      const head = b64({ alg: 'HS256', typ: 'JWT', kid: rsa.kid });
      const body = b64(claims(idp.issuer));
      const mac = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
      expectUnauthenticated(
        await graphql(t.url, `${head}.${body}.${mac}`, TAGS, { assistantId: 'a' }),
      );
    }

    // A key the issuer never published.
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = jwt.sign(claims(idp.issuer), stranger, {
      algorithm: 'RS256',
      keyid: 'unknown-kid',
    });
    expectUnauthenticated(await graphql(t.url, forged, TAGS, { assistantId: 'a' }));
    const forgedSameKid = jwt.sign(claims(idp.issuer), stranger, {
      algorithm: 'RS256',
      keyid: rsa.kid,
    });
    expectUnauthenticated(await graphql(t.url, forgedSameKid, TAGS, { assistantId: 'a' }));

    // Keycloak ID and refresh tokens are not access tokens.
    expectUnauthenticated(
      await graphql(t.url, sign(claims(idp.issuer, { typ: 'ID' })), TAGS, { assistantId: 'a' }),
    );
  });

  it('accepts ES256 tokens signed with a published EC key', async () => {
    const ec = keyOf(idp, 'EC');
    await ok(t, jwt.sign(claims(idp.issuer), ec.key, { algorithm: 'ES256', keyid: ec.kid }));
  });

  it('gives FORBIDDEN (in-band, no data) to a valid token without the role', async () => {
    const token = await fetchToken(idp, 'parley-readonly', 'readonly-secret');
    for (const [query, variables] of [
      [TAGS, { assistantId: 'a' }],
      [RAW, { input: { assistantId: 'a' } }],
      [DELETE, { input: { conversationIds: ['x'] } }],
    ] as const) {
      const res = await graphql(t.url, token, query, variables);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors?.[0]?.extensions).toEqual({ code: 'FORBIDDEN' });
      expect(res.body.errors?.[0]?.message).toContain('Manage Conversations');
    }
  });

  it('accepts the role as a client role (resource_access.<client>.roles)', async () => {
    await ok(t, await fetchToken(idp, 'parley-ci', 'ci-secret'));
    // …unless client roles are limited to other clients.
    const audienceToken = await fetchToken(idp, 'parley-audience', 'audience-secret');
    await ok(strict, audienceToken);
    const ci = await fetchToken(idp, 'parley-ci', 'ci-secret');
    // parley-ci has no audience mapper, so the strict server refuses it before looking at roles.
    expectUnauthenticated(await graphql(strict.url, ci, TAGS, { assistantId: 'a' }), /audience/);
    const rsa = keyOf(idp, 'RSA');
    const clientRoleOnly = jwt.sign(
      claims(idp.issuer, {
        aud: 'parley-api',
        realm_access: { roles: [] },
        resource_access: { 'parley-api': { roles: ['Manage Conversations'] } },
      }),
      rsa.key,
      { algorithm: 'RS256', keyid: rsa.kid },
    );
    const res = await graphql(strict.url, clientRoleOnly, TAGS, { assistantId: 'a' });
    expect(res.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('checks the audience when one is configured', async () => {
    const external = await fetchToken(idp); // aud "account", as Keycloak without a mapper
    expectUnauthenticated(
      await graphql(strict.url, external, TAGS, { assistantId: 'a' }),
      /audience/,
    );
    await ok(strict, await fetchToken(idp, 'parley-audience', 'audience-secret'));
  });

  it('applies depth and complexity limits and can turn introspection off', async () => {
    const token = await fetchToken(idp, 'parley-audience', 'audience-secret');
    const deep = await graphql(strict.url, token, RAW, { input: { assistantId: 'a' } });
    expect(deep.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(deep.body.errors?.[0]?.message).toMatch(/depth/);
    const shallow = `query R($input: RawConversationsInput!) { rawConversations(input: $input) { count conversations { id } } }`;
    expect(
      (await graphql(strict.url, token, shallow, { input: { assistantId: 'a' } })).body,
    ).toEqual({
      data: { rawConversations: { count: 0, conversations: [] } },
    });
    const big = await graphql(strict.url, token, shallow, {
      input: { assistantId: 'a', limit: 50 },
    });
    expect(big.status).toBe(400);
    expect(big.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    const introspection = await graphql(strict.url, token, '{ __schema { types { name } } }');
    expect(introspection.body.errors?.[0]?.message).toMatch(/introspection/i);
    const allowed = await graphql(
      t.url,
      await fetchToken(idp),
      '{ __schema { queryType { name } } }',
    );
    expect(allowed.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('answers 401 to every token while no issuer is configured', async () => {
    const none = await startTestApp();
    try {
      const res = await graphql(none.url, await fetchToken(idp), TAGS, { assistantId: 'a' });
      expectUnauthenticated(res, /No identity provider/);
    } finally {
      await none.close();
    }
  });
});

describe('GraphQL authentication with an external issuer: JWKS key rotation', () => {
  let jwks: { keys: Array<Record<string, unknown>> } = { keys: [] };
  let fetches = 0;
  let server: Server;
  let issuer: string;
  let t: TestApp;

  const newKey = (kid: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return {
      kid,
      privateKey,
      jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
    };
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/auth/realms/ext/protocol/openid-connect/certs') {
        fetches++;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(jwks));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/realms/ext`;
    t = await startTestApp({ env: { OIDC_ISSUER_URL: issuer } });
  });

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('caches the JWKS and fetches it again for a new key id', async () => {
    const first = newKey('k1');
    jwks = { keys: [first.jwk] };
    const tokenA = jwt.sign(claims(issuer), first.privateKey, { algorithm: 'RS256', keyid: 'k1' });
    for (let i = 0; i < 3; i++) {
      expect((await graphql(t.url, tokenA, TAGS, { assistantId: 'a' })).status).toBe(200);
    }
    expect(fetches).toBe(1);

    const second = newKey('k2');
    jwks = { keys: [second.jwk] }; // the issuer rotated its key
    const tokenB = jwt.sign(claims(issuer), second.privateKey, { algorithm: 'RS256', keyid: 'k2' });
    const res = await graphql(t.url, tokenB, TAGS, { assistantId: 'a' });
    expect(res.body).toEqual({ data: { conversationTags: [] } });
    expect(fetches).toBe(2);
  });

  it('rate-limits JWKS fetches: a flood of unknown key ids cannot hammer the issuer', async () => {
    const stranger = newKey('never-published');
    const before = fetches;
    for (let i = 0; i < 15; i++) {
      const token = jwt.sign(claims(issuer), stranger.privateKey, {
        algorithm: 'RS256',
        keyid: `unknown-${i}`,
      });
      expect((await graphql(t.url, token, TAGS, { assistantId: 'a' })).status).toBe(401);
    }
    // Without a limit each unknown kid would be one fetch (15); with it at most 10 a minute in
    // all, the fetches of the rotation test included.
    expect(fetches - before).toBeGreaterThan(0);
    expect(fetches).toBeLessThanOrEqual(10);
  });
});
