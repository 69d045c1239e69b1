import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { FLOWSBOT, sayRest, trainBot } from 'test/utils/bots';
import { credentialsFile, removeTempDirs } from 'test/utils/channels';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'browser-inspector-token';
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) {
  process.stdout.write(
    `inspector browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)\n`,
  );
}

afterAll(removeTempDirs);

/**
 * The inspector page in headless Debian Chromium, offline (every request not to 127.0.0.1 is
 * refused and recorded), chatting with the flows bot over the socketio channel (defaults: the
 * sender is the socket's id) on a server with an auth token.
 */
describeWithChromium('inspector page in headless Chromium (flows bot, socketio)', () => {
  let t: TestApp;
  let dir: string;
  let browser: Browser;
  let tab: Page;
  const blocked: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-inspector-'));
    const models = trainBot(FLOWSBOT, join(dir, 'models'));
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: models,
        PARLEY_INSPECT: 'true',
        PARLEY_AUTH_TOKEN: TOKEN,
        PARLEY_CREDENTIALS: credentialsFile('socketio:\n'),
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    tab = await browser.newPage();
    tab.on('pageerror', (e) => pageErrors.push(e.message));
    await tab.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).hostname === '127.0.0.1') return route.continue();
      blocked.push(url);
      return route.abort();
    });
    await tab.goto(`${t.url}/webhooks/socketio/inspect.html?token=${TOKEN}`);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function say(text: string): Promise<void> {
    await tab.locator('#message').fill(text);
    await tab.locator('#send').click();
  }

  const bot = (text: string) => tab.locator('#messages li.bot', { hasText: text });
  const tabButton = (name: string) => tab.locator(`[role="tab"][data-tab="${name}"]`);

  it('chats over socket.io; the slots tab and the flow diagram follow the conversation', async () => {
    await tab.locator('#stream-status', { hasText: 'stream: open' }).waitFor();
    await tab.locator('#sender', { hasNotText: '—' }).waitFor();
    const status = await request(t.url).get(`/status?token=${TOKEN}`).expect(200);
    await tab.locator('#model-id', { hasText: status.body.model_id }).waitFor();

    await say('book a repair');
    await bot('What kind of bike is it').waitFor();
    await tabButton('flow').click();
    const collectBike = tab.locator(
      '#flow .step.active[data-step-id="book_repair_0_collect_bike_type"]',
    );
    await collectBike.waitFor();
    expect(await collectBike.innerText()).toContain('collect bike_type');
    expect(await tab.locator('#flow .step.active').count()).toBe(1);
    await tab.locator('#latency', { hasText: /^\d+ ms$/ }).waitFor();

    await say('road');
    await bot('Which day would you like').waitFor();
    await tab.locator('#flow .step.active[data-step-id="book_repair_1_collect_weekday"]').waitFor();
    await tab
      .locator('#flow .step.visited[data-step-id="book_repair_0_collect_bike_type"]')
      .waitFor();
    await tabButton('slots').click();
    await tab.locator('#slots tr[data-slot="bike_type"] td', { hasText: /^road$/ }).waitFor();

    await say('friday');
    await bot('Book a repair of your road bike on friday?').waitFor();
    await tab.locator('#slots tr[data-slot="weekday"] td', { hasText: /^friday$/ }).waitFor();
    // The confirmation's buttons are clickable: "Yes" sends its payload.
    await tab.locator('#messages button.reply', { hasText: 'Yes' }).click();
    await bot('Booked: bring your road bike on friday.').waitFor();
    // The flow ended: its slots are reset (reset_after_flow_ends), and the table hides nulls.
    await tab.locator('#slots tr[data-slot="bike_type"]').waitFor({ state: 'detached' });
    await tabButton('flow').click();
    await tab.locator('#flow-title', { hasNotText: 'book_repair' }).waitFor();
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('shows the conversation as a story and as an end-to-end test case', async () => {
    await tabButton('story').click();
    const story = tab.locator('#story-text');
    await story.filter({ hasText: 'utter_repair_booked' }).waitFor();
    expect(await story.innerText()).toContain('intent: book_repair');

    await tabButton('test-case').click();
    const testCase = tab.locator('#test-case-text');
    await testCase.filter({ hasText: 'utter_repair_booked' }).waitFor();
    const text = await testCase.innerText();
    expect(text).toContain('- user: "book a repair"');
    expect(text).toContain('- user: "road"');
    expect(text).toContain('- utter: utter_ask_bike_type');
    // Copy puts the test case on the clipboard as shown.
    await tab.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    await tab.locator('#panel-test-case button.copy').click();
    await tab.locator('#panel-test-case button.copy', { hasText: 'Copied' }).waitFor();
    expect(await tab.evaluate('navigator.clipboard.readText()')).toBe(await testCase.textContent());

    await tabButton('events').click();
    expect(await tab.locator('#events li[data-event="user"]').count()).toBe(4);
  }, 60_000);

  it('restarts the conversation and starts a new one', async () => {
    const sender = await tab.locator('#sender').innerText();
    await tab.locator('#restart').click();
    await tab.locator('#messages li.system', { hasText: 'conversation restarted' }).waitFor();
    await tabButton('events').click();
    await tab.locator('#events li').first().waitFor({ state: 'detached' });

    await tab.locator('#new-conversation').click();
    await tab
      .locator('#sender')
      .filter({ hasNotText: sender })
      .filter({ hasNotText: '—' })
      .waitFor();
    await say('when are you open');
    await bot('The workshop is open Monday to Friday').waitFor();
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('follows a REST conversation on the rest page (?sender=), live', async () => {
    const sender = uniqueId('insp-rest');
    await sayRest(t.url, sender, 'when are you open');
    const rest = await browser.newPage();
    rest.on('pageerror', (e) => pageErrors.push(e.message));
    await rest.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).hostname === '127.0.0.1') return route.continue();
      blocked.push(url);
      return route.abort();
    });
    try {
      await rest.goto(`${t.url}/webhooks/rest/inspect.html?token=${TOKEN}&sender=${sender}`);
      expect(await rest.locator('#composer').isHidden()).toBe(true);
      await rest.locator('#messages li.user', { hasText: 'when are you open' }).waitFor();
      await rest.locator('#messages li.bot', { hasText: 'The workshop is open' }).waitFor();
      // A message over the REST channel reaches the open page through the stream.
      await sayRest(t.url, sender, 'book a repair');
      await rest.locator('#messages li.bot', { hasText: 'What kind of bike is it' }).waitFor();
      await rest.locator('[role="tab"][data-tab="flow"]').click();
      await rest
        .locator('#flow .step.active[data-step-id="book_repair_0_collect_bike_type"]')
        .waitFor();
      expect(blocked).toEqual([]);
      expect(pageErrors).toEqual([]);
    } finally {
      await rest.close();
    }
  }, 60_000);
});
