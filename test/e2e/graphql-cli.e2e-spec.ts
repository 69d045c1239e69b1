import { join } from 'node:path';
import { ROOT, startCliServer } from 'test/utils/cli';
import { fetchToken, graphql } from 'test/utils/oidc';

describe('parley run starts the embedded identity provider when no issuer is configured', () => {
  it('serves tokens on Keycloak paths that /api/graphql accepts, and stops with the server', async () => {
    const server = await startCliServer(
      ['--enable-api', '--domain', join(ROOT, 'examples', 'coffee', 'domain.yml')],
      {
        ...process.env,
        OIDC_EMBEDDED_PORT: '0',
        PARLEY_OIDC_CLIENT_SECRET: 'cli-test-secret',
        LOG_LEVEL: 'info',
      },
    );
    let issuer = '';
    try {
      issuer = /"issuer":"(http[^"]+)"/.exec(server.output())?.[1] ?? '';
      expect(issuer).toMatch(/^http:\/\/localhost:\d+\/auth\/realms\/parley$/);
      const discovery = (await (
        await fetch(`${issuer}/.well-known/openid-configuration`)
      ).json()) as Record<string, string>;
      expect(discovery.issuer).toBe(issuer);
      expect(discovery.token_endpoint).toBe(`${issuer}/protocol/openid-connect/token`);
      expect(discovery.jwks_uri).toBe(`${issuer}/protocol/openid-connect/certs`);
      const certs = (await (await fetch(discovery.jwks_uri ?? '')).json()) as {
        keys: Array<Record<string, string>>;
      };
      expect(certs.keys.map((k) => k.kty).sort()).toEqual(['EC', 'RSA']);
      expect(certs.keys.every((k) => k.d === undefined)).toBe(true); // public parts only

      const token = await fetchToken(
        { issuer, port: 0, clients: [], stop: () => Promise.resolve() },
        'parley-external',
        'cli-test-secret',
      );
      const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
      expect(payload).toMatchObject({
        iss: issuer,
        azp: 'parley-external',
        typ: 'Bearer',
        realm_access: { roles: expect.arrayContaining(['Manage Conversations']) },
      });
      const res = await graphql(
        server.base,
        token,
        '{ conversationTags(assistantId: "x") { id } }',
      );
      expect(res.body).toEqual({ data: { conversationTags: [] } });
    } finally {
      await server.stop();
    }
    // The provider went down with Parley.
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });
});
