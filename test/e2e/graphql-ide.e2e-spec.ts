import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, startTestIdp, type TestIdp } from 'test/utils/oidc';

const CHROMIUM = '/usr/bin/chromium';
const QUERY = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id conversationEvents } }
}`;

describe('GraphQL IDE at GET /api/graphql (offline GraphiQL)', () => {
  let idp: TestIdp;
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    }
    idp = await startTestIdp();
    t = await startTestApp({ env: { OIDC_ISSUER_URL: idp.issuer } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.close();
  });

  it('serves the page and its files from Parley itself, nothing from another host', async () => {
    const page = await request(t.url).get('/api/graphql').set('Accept', 'text/html').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const html = page.text;
    expect(html).toContain('id="token"');
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(sources.length).toBeGreaterThanOrEqual(5);
    for (const source of sources) {
      expect(source).toMatch(/^\/api\/graphql\/ide\//);
      const asset = await request(t.url).get(source).expect(200);
      expect(Number(asset.headers['content-length'] ?? asset.text.length)).toBeGreaterThan(0);
    }
    await request(t.url).get('/api/graphql/ide/unknown.js').expect(401); // falls through to the API
    // Not a browser: the API, which wants a token.
    await request(t.url).get('/api/graphql').set('Accept', 'application/json').expect(401);
  });

  it('runs rawConversations with a pasted token in headless Chromium, with the network cut off', async () => {
    const assistantId = uniqueId('ide');
    const id = uniqueId('ide-conv');
    await request(t.url)
      .post(`/conversations/${id}/tracker/events`)
      .send(
        [
          { event: 'action', name: 'action_session_start' },
          { event: 'session_started' },
          { event: 'slot', name: 'mood', value: 'great' },
        ].map((e, i) => ({
          ...e,
          timestamp: 1767225600 + i,
          metadata: { assistant_id: assistantId },
        })),
      )
      .expect(200);
    const token = await fetchToken(idp);

    const context = await browser.newContext();
    const origin = new URL(t.url).origin;
    const elsewhere: string[] = [];
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) {
        await route.continue();
      } else {
        elsewhere.push(url);
        await route.abort('internetdisconnected');
      }
    });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const params = new URLSearchParams({
      query: QUERY,
      variables: JSON.stringify({ input: { assistantId } }),
    });
    await page.goto(`${t.url}/api/graphql?${params.toString()}`);
    await page.fill('#token', token);
    await page.click('#apply');
    await page.locator('.graphiql-execute-button').click();
    await page.locator('.graphiql-response').filter({ hasText: id }).waitFor({ timeout: 15_000 });
    const shown = (await page.locator('.graphiql-response').textContent()) ?? '';
    expect(shown).toContain('"count": 1');
    expect(shown).toContain('"event": "session_started"');
    expect(elsewhere).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('is off with GRAPHQL_IDE=false', async () => {
    const off = await startTestApp({ env: { OIDC_ISSUER_URL: idp.issuer, GRAPHQL_IDE: 'false' } });
    try {
      await request(off.url).get('/api/graphql').set('Accept', 'text/html').expect(401);
      await request(off.url).get('/api/graphql/ide/graphiql.min.js').expect(401);
    } finally {
      await off.close();
    }
  });
});
