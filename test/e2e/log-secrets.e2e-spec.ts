import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startCliServer, type CliServer } from 'test/utils/cli';
import { FIXTURES } from 'test/utils/create-test-app';

/**
 * Credentials never reach a log line: a real `parley run` at level debug, its whole output
 * captured, requests carrying secrets in the query string and in headers, endpoints with
 * credentials in their URLs, and failing requests that write error lines. The captured log
 * holds the lines (with their URLs) but none of the secret values.
 */
describe('no credential in any log line (parley run, whole output captured)', () => {
  const secrets = {
    token: 'QueryTokenValue7f3a',
    accessToken: 'AccessTokenValue91bc',
    apiKey: 'ApiKeyValue55de',
    signature: 'SignatureValue0a1b',
    authorization: 'BearerValue.abc.123',
    cookie: 'CookieValue4455',
    headerKey: 'HeaderKeyValue8899',
    hubSignature: 'sha256=HubSignatureValue77',
    dbPassword: 'DbPasswordValue3c3c',
    modelServerPassword: 'ModelServerPw6e6e',
    modelServerToken: 'ModelServerTok2d2d',
    actionToken: 'ActionTokenValue1f1f',
    actionPassword: 'ActionPwValue9a9a',
  };
  let dir: string;
  let server: CliServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-log-secrets-'));
    const emptyModels = join(dir, 'models');
    mkdirSync(emptyModels);
    const closed = await freePort();
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      [
        'action_endpoint:',
        `  url: http://actions:${secrets.actionPassword}@127.0.0.1:${closed}/webhook?token=${secrets.actionToken}`,
        'models:',
        `  url: http://puller:${secrets.modelServerPassword}@127.0.0.1:${closed}/models/latest?api_key=${secrets.apiKey}`,
        `  token: ${secrets.modelServerToken}`,
        '  wait_time_between_pulls: 0.2',
        '',
      ].join('\n'),
    );
    const db = new URL(process.env.DATABASE_URL ?? '');
    // A server that trusts local connections takes any password; the embedded one has a random
    // password of its own. Either way, the password in DATABASE_URL must never be logged.
    if (db.password === '') db.password = secrets.dbPassword;
    else secrets.dbPassword = decodeURIComponent(db.password);
    server = await startCliServer([], {
      ...process.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      DATABASE_URL: db.toString(),
      PARLEY_ENABLE_API: 'true',
      PARLEY_ENDPOINTS: endpoints,
      PARLEY_DOMAIN: join(FIXTURES, 'domain.yml'),
      // An empty models folder: the domain is served without a model.
      PARLEY_MODEL: emptyModels,
      OIDC_EMBEDDED: 'false',
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const logLines = (): Array<Record<string, unknown>> =>
    server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('logs requests and failures with their URLs, but none of the secret values', async () => {
    const query =
      `?token=${secrets.token}&access_token=${secrets.accessToken}&api_key=${secrets.apiKey}` +
      `&signature=${secrets.signature}&sender=ok`;
    const headers = {
      authorization: `Bearer ${secrets.authorization}`,
      cookie: `session=${secrets.cookie}`,
      'x-api-key': secrets.headerKey,
      'x-hub-signature-256': secrets.hubSignature,
      'content-type': 'application/json',
    };
    const ok = await fetch(`${server.base}/conversations/log-secrets/tracker${query}`, {
      headers,
    });
    expect(ok.status).toBe(200);
    // A conversation id the database cannot store (NUL): an error answer and its log lines.
    const failed = await fetch(`${server.base}/conversations/log%00secrets/tracker${query}`, {
      headers,
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const bad = await fetch(`${server.base}/conversations/log-secrets/tracker/events${query}`, {
      method: 'POST',
      headers,
      body: '{"event": ',
    });
    expect(bad.status).toBe(400);

    // Wait (bounded) for the failing model-server pulls and the request lines to be written.
    for (let i = 0; i < 40; i++) {
      const lines = logLines();
      const pulls = lines.filter(
        (l) => l.msg === 'model server pull failed; keeping the current model',
      );
      const requests = lines.filter((l) => JSON.stringify(l.req ?? '').includes('log'));
      if (pulls.length > 0 && requests.length >= 3) break;
      await new Promise((r) => setTimeout(r, 250));
    }

    const output = server.output();
    const lines = logLines();
    // The lines are there, with their URLs (credentials hidden) …
    const requestUrls = lines.map((l) => (l.req as { url?: string } | undefined)?.url ?? '');
    expect(requestUrls).toContain(
      '/conversations/log-secrets/tracker?token=[Redacted]&access_token=[Redacted]' +
        '&api_key=[Redacted]&signature=[Redacted]&sender=ok',
    );
    expect(
      requestUrls.some((u) => u.startsWith('/conversations/log%00secrets/tracker?token=')),
    ).toBe(true);
    const problems = lines.filter((l) => (l.level as number) >= 40);
    expect(problems.some((l) => JSON.stringify(l).includes('[Redacted]'))).toBe(true);
    const pull = lines.find((l) => l.msg === 'model server pull failed; keeping the current model');
    expect(pull?.url).toMatch(
      /^http:\/\/puller:\[Redacted\]@127\.0\.0\.1:\d+\/models\/latest\?api_key=\[Redacted\]$/,
    );
    expect(lines.some((l) => l.msg === 'custom action server configured')).toBe(true);
    // … and not one secret value anywhere in the output.
    for (const [name, value] of Object.entries(secrets)) {
      expect({ name, found: output.includes(value) }).toEqual({ name, found: false });
    }
  }, 60_000);
});
