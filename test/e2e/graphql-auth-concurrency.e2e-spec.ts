import jwt from 'jsonwebtoken';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';

const CREATE = `mutation Create($input: CreateConversationTagInput!) {
  createConversationTag(input: $input) { name assistantId }
}`;
const TAGS = `query Tags($assistantId: ID!) { conversationTags(assistantId: $assistantId) { name } }`;

type Kind = 'valid' | 'validCi' | 'forged' | 'expired' | 'roleless';
const KINDS: readonly Kind[] = ['valid', 'forged', 'roleless', 'expired', 'validCi', 'forged'];
/** Requests per round: every kind many times, interleaved, all in flight at once. */
const PER_ROUND = 240;
/** A request that has not been answered by then counts as hanging (a bound, not a timing). */
const HANG_BOUND_MS = 60_000;

describe('GraphQL authentication under concurrency: every request gets its own verdict', () => {
  let idp: TestIdp;
  let t: TestApp;
  const tokens = {} as Record<Kind, string>;

  beforeAll(async () => {
    idp = await startTestIdp();
    t = await startTestApp({ env: { OIDC_ISSUER_URL: idp.issuer } });
    const jwk = idp.keys.find((k) => k.kty === 'RSA');
    if (!jwk) throw new Error('no RSA key');
    const realKey = createPrivateKey({ key: jwk, format: 'jwk' });
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const claims = (extra: Record<string, unknown> = {}) => ({
      iss: idp.issuer,
      sub: 'parley-external',
      azp: 'parley-external',
      typ: 'Bearer',
      aud: 'account',
      iat: now,
      exp: now + 600,
      realm_access: { roles: ['Manage Conversations'] },
      ...extra,
    });
    tokens.valid = await fetchToken(idp);
    tokens.validCi = await fetchToken(idp, 'parley-ci', 'ci-secret');
    tokens.roleless = await fetchToken(idp, 'parley-readonly', 'readonly-secret');
    // Signed by a key the issuer never published, under the issuer's real key id.
    tokens.forged = jwt.sign(claims(), stranger, { algorithm: 'RS256', keyid: jwk.kid });
    tokens.expired = jwt.sign(claims({ iat: now - 900, exp: now - 300 }), realKey, {
      algorithm: 'RS256',
      keyid: jwk.kid,
    });
  });

  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  async function send(kind: Kind, assistantId: string, name: string) {
    const response = await fetch(`${t.url}/api/graphql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokens[kind]}` },
      body: JSON.stringify({ query: CREATE, variables: { input: { assistantId, name } } }),
      signal: AbortSignal.timeout(HANG_BOUND_MS),
    });
    return { kind, name, status: response.status, body: await response.json() };
  }

  it('interleaved valid, forged (real kid), expired and role-less requests: only the valid ones mutate', async () => {
    const assistantId = uniqueId('race');
    const allowed: string[] = [];
    for (let round = 0; round < 2; round++) {
      const requests = Array.from({ length: PER_ROUND }, (_, i) => {
        const kind = KINDS[i % KINDS.length] ?? 'valid';
        const name = `${kind}-${round}-${i}`;
        if (kind === 'valid' || kind === 'validCi') allowed.push(name);
        return send(kind, assistantId, name);
      });
      const answers = await Promise.all(requests);
      for (const answer of answers) {
        switch (answer.kind) {
          case 'valid':
          case 'validCi':
            expect(answer).toEqual({
              ...answer,
              status: 200,
              body: { data: { createConversationTag: { name: answer.name, assistantId } } },
            });
            break;
          case 'roleless':
            expect(answer).toEqual({
              ...answer,
              status: 200,
              body: {
                data: null,
                errors: [
                  expect.objectContaining({
                    extensions: { code: 'FORBIDDEN' },
                    path: ['createConversationTag'],
                  }),
                ],
              },
            });
            break;
          case 'forged':
          case 'expired':
            expect(answer).toEqual({
              ...answer,
              status: 401,
              body: {
                errors: [
                  {
                    message: expect.stringMatching(
                      answer.kind === 'expired' ? /expired/ : /token/i,
                    ) as unknown,
                    extensions: { code: 'UNAUTHENTICATED' },
                  },
                ],
              },
            });
        }
      }
    }

    // Afterwards, through the API: exactly the allowed mutations happened, no refused one.
    const listed = await graphql(t.url, tokens.valid, TAGS, { assistantId });
    expect(listed.status).toBe(200);
    const names = (listed.body.data?.conversationTags as Array<{ name: string }>).map(
      (tag) => tag.name,
    );
    expect(names.sort()).toEqual([...allowed].sort());
  }, 180_000);

  it('a burst of valid requests all get their own answer (none is left hanging)', async () => {
    const assistantId = uniqueId('burst');
    const names = Array.from({ length: 50 }, (_, i) => `burst-${i}`);
    const answers = await Promise.all(names.map((name) => send('valid', assistantId, name)));
    expect(answers.map((a) => a.status)).toEqual(names.map(() => 200));
    expect(
      answers.map((a) => (a.body as { data: { createConversationTag: { name: string } } }).data),
    ).toEqual(names.map((name) => ({ createConversationTag: { name, assistantId } })));
  });
});
