import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { FLOWSBOT, sayRest, trainBot } from 'test/utils/bots';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { CLIENT_SECRET, startTestIdp, type TestIdp } from 'test/utils/oidc';

const CHROMIUM = '/usr/bin/chromium';
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) {
  process.stdout.write(
    `review browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)\n`,
  );
}

/** The server is on 127.0.0.1; the embedded provider's issuer names localhost. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost']);

/** `datetime-local` value (read by the page as UTC) of a time. */
function localUtc(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/**
 * The conversation review page in headless Debian Chromium, offline (every request not to the
 * loopback host is refused and recorded): signs in at the embedded identity provider with a
 * client-credentials client, and reads, tags and deletes a REST conversation of the flows bot
 * through /api/graphql.
 */
describeWithChromium('conversation review page in headless Chromium', () => {
  let idp: TestIdp;
  let t: TestApp;
  let dir: string;
  let browser: Browser;
  let tab: Page;
  const blocked: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-review-'));
    const models = trainBot(FLOWSBOT, join(dir, 'models'));
    idp = await startTestIdp();
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_MODEL: models, OIDC_ISSUER_URL: idp.issuer },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 240_000);

  beforeEach(async () => {
    tab = await browser.newPage();
    tab.on('pageerror', (e) => pageErrors.push(e.message));
    tab.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await tab.route('**/*', (route) => {
      const url = route.request().url();
      if (LOOPBACK.has(new URL(url).hostname)) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    await tab.goto(`${t.url}/review/`);
  });

  afterEach(async () => {
    await tab?.close();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await idp?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function signIn(secret: string): Promise<void> {
    await tab.locator('#client-id').fill('parley-external');
    await tab.locator('#client-secret').fill(secret);
    await tab.locator('#sign-in-button').click();
  }

  it('serves the page with a strict Content-Security-Policy naming the issuer', async () => {
    await request(t.url)
      .get('/review')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    const res = await request(t.url).get('/review/').expect(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain(`connect-src 'self' ${new URL(idp.issuer).origin}`);
    expect(csp).not.toContain('unsafe-inline');
    await request(t.url)
      .get('/review/assets/review.js')
      .expect(200)
      .expect(/client_credentials/);
    await request(t.url).get('/review/assets/../../package.json').expect(404);
    await request(t.url).get('/review/assets/nothing.js').expect(404);
  });

  it('a wrong secret shows a clear sign-in error and no conversations', async () => {
    await signIn('not-the-secret');
    const error = tab.locator('#sign-in-error');
    await error.filter({ hasText: 'wrong client id or secret' }).waitFor();
    expect(await error.innerText()).toContain('invalid_client');
    expect(await tab.locator('#review').isHidden()).toBe(true);
    expect(blocked).toEqual([]);
  });

  it("a client without the page's origin among its web origins is refused by the browser", async () => {
    // parley-readonly lists no web origins: the provider answers without CORS approval.
    await tab.locator('#client-id').fill('parley-readonly');
    await tab.locator('#client-secret').fill('readonly-secret');
    await tab.locator('#sign-in-button').click();
    await tab.locator('#sign-in-error', { hasText: "among the client's web origins" }).waitFor();
    expect(await tab.locator('#review').isHidden()).toBe(true);
    // The provider refuses that origin for this client; without an Origin (no browser) the
    // same credentials get a token.
    const tokenRequest = (headers: Record<string, string>) =>
      fetch(`${idp.issuer}/protocol/openid-connect/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'parley-readonly',
          client_secret: 'readonly-secret',
        }).toString(),
      });
    const fromPage = await tokenRequest({ Origin: t.url });
    expect(fromPage.status).toBe(400);
    expect(fromPage.headers.get('access-control-allow-origin')).toBeNull();
    expect((await tokenRequest({})).status).toBe(200);
  });

  it('signs in, lists, shows, tags, untags and deletes a REST conversation; signs out', async () => {
    const startedAfter = Date.now() - 60_000;
    const sender = uniqueId('review');
    await sayRest(t.url, sender, 'when are you open');
    await sayRest(t.url, sender, 'book a repair');

    await signIn(CLIENT_SECRET);
    await tab.locator('#who-client', { hasText: 'parley-external' }).waitFor();
    // The token is in the script's memory only: no storage, no cookie, not in the URL.
    expect(
      await tab.evaluate('localStorage.length + sessionStorage.length + document.cookie.length'),
    ).toBe(0);
    expect(tab.url()).toBe(`${t.url}/review/`);
    expect(await tab.locator('#client-secret').inputValue()).toBe('');
    // The assistant of the served model is the default filter; narrow the time window too.
    expect(await tab.locator('#assistant').inputValue()).toBe('flows_bot');
    await tab.locator('#from').fill(localUtc(startedAfter));
    await tab.locator('#apply').click();
    const row = tab.locator(`#conversations tbody tr[data-id="${sender}"]`);
    await row.waitFor();

    // A window that ends before the conversation started leaves it out. (Other suites' flows bot
    // conversations may fall in that second; the page only replaces rows with a new answer.)
    await tab.locator('#to').fill(localUtc(startedAfter + 1000));
    await tab.locator('#apply').click();
    await row.waitFor({ state: 'detached' });
    await tab.locator('#to').fill('');
    await tab.locator('#apply').click();
    await row.waitFor();

    await row.click();
    await tab.locator('#conversation-id', { hasText: sender }).waitFor();
    const transcript = tab.locator('#transcript');
    await transcript.locator('li.user', { hasText: 'when are you open' }).waitFor();
    await transcript.locator('li.bot', { hasText: 'The workshop is open' }).waitFor();
    await transcript.locator('li.user', { hasText: 'book a repair' }).waitFor();
    await transcript.locator('li.bot', { hasText: 'What kind of bike is it' }).waitFor();
    // Messages and landmarks by default; every event (but action_listen) on demand.
    await transcript.locator('li[data-event="flow_started"]', { hasText: 'book_repair' }).waitFor();
    expect(await transcript.locator('li[data-event="action"]').count()).toBe(0);
    await tab.locator('#all-events').check();
    await transcript
      .locator('li[data-event="action"]', { hasText: 'action_session_start' })
      .waitFor();
    expect(await transcript.locator('li', { hasText: 'action_listen' }).count()).toBe(0);

    const tagName = uniqueId('needs-review');
    await tab.locator('#new-tag').fill(tagName);
    await tab.locator('#add-tag').click();
    const chip = tab.locator('#conversation-tags li', { hasText: tagName });
    await chip.waitFor();
    await row.locator('.tag', { hasText: tagName }).waitFor();

    // The tag filter (the API's tagIds) lists only the tagged conversation.
    await tab.locator('#tag-filter').selectOption({ label: tagName });
    await tab.locator('#apply').click();
    await tab.locator('#page-info', { hasText: /^1–1 of 1$/ }).waitFor();
    expect(await tab.locator('#conversations tbody tr').count()).toBe(1);
    await row.click();
    await chip.locator('button.remove-tag').click();
    await chip.waitFor({ state: 'detached' });
    // Untagged, it no longer passes the tag filter; without it, it is back.
    await row.waitFor({ state: 'detached' });
    await tab.locator('#page-info', { hasText: 'no conversations' }).waitFor();
    await tab.locator('#tag-filter').selectOption([]);
    await tab.locator('#apply').click();
    await row.waitFor();
    expect(await row.locator('.tag', { hasText: tagName }).count()).toBe(0);

    await row.click();
    await tab.locator('#conversation-id', { hasText: sender }).waitFor();
    await tab.locator('#delete').click();
    await tab.locator('#delete-yes').click();
    await tab.locator('#list-info', { hasText: 'Conversation deleted.' }).waitFor();
    expect(await row.count()).toBe(0);
    // Gone for the server too: asked again, its tracker starts afresh, without the messages.
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    const events = tracker.body.events as Array<{ event: string }>;
    expect(events.filter((e) => e.event === 'user' || e.event === 'bot')).toEqual([]);

    await tab.locator('#sign-out').click();
    await tab.locator('#sign-in-form').waitFor();
    expect(await tab.locator('#review').isHidden()).toBe(true);
    expect(await tab.locator('#conversations tbody tr').count()).toBe(0);
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('shows GraphQL errors with their code', async () => {
    await signIn(CLIENT_SECRET);
    await tab.locator('#who-client', { hasText: 'parley-external' }).waitFor();
    await tab.locator('#from').fill('2026-02-01T00:00:00');
    await tab.locator('#to').fill('2026-01-01T00:00:00');
    await tab.locator('#apply').click();
    await tab
      .locator('#error', { hasText: 'BAD_USER_INPUT: fromTime must not be later than toTime.' })
      .waitFor();
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
