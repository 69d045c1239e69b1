import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { credentialsFile, removeTempDirs, trainMoodbot } from 'test/utils/channels';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

const CHROMIUM = '/usr/bin/chromium';

/** A local page embedding the unmodified rasa-webchat UMD bundle from node_modules. */
function page(socketUrl: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Parley webchat</title></head>
<body>
<div id="webchat"></div>
<script src="/rasa-webchat.js"></script>
<script>
  window.WebChat.default({
    selector: '#webchat',
    socketUrl: ${JSON.stringify(socketUrl)},
    socketPath: '/socket.io/',
    initPayload: '/bot_challenge',
    title: 'Parley',
    params: { storage: 'session' },
  }, null);
</script>
</body></html>`;
}

/**
 * The browser test: the `rasa-webchat` widget (npm, unmodified) on a local page in headless
 * Debian Chromium, talking to Parley's socketio channel, answered by the moodbot.
 */
describe('rasa-webchat in headless Chromium (moodbot)', () => {
  let t: TestApp;
  let site: Server;
  let siteUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    const models = trainMoodbot();
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: models,
        PARLEY_CORS: '*',
        PARLEY_CREDENTIALS: credentialsFile('socketio:\n  session_persistence: true\n'),
      },
    });
    const bundle = readFileSync(require.resolve('rasa-webchat/lib/index.js'));
    const html = page(t.url);
    site = createServer((req, res) => {
      if (req.url === '/rasa-webchat.js') {
        res.writeHead(200, { 'content-type': 'application/javascript' }).end(bundle);
      } else {
        res.writeHead(200, { 'content-type': 'text/html' }).end(html);
      }
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const address = site.address();
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await t?.close();
  });

  it('sends "hi", shows the greeting with its quick replies, and answers a quick reply', async () => {
    const tab = await browser.newPage();
    // Hermetic: only the local page and Parley answer; anything else (fonts, CDNs) is refused.
    await tab.route('**/*', (route) =>
      new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
    );
    try {
      await tab.goto(siteUrl);
      await tab.locator('.rw-launcher').click();
      // The init payload's answer shows the widget is connected.
      await tab.locator('.rw-response', { hasText: 'I am a bot, built with Parley.' }).waitFor();
      await tab.locator('.rw-new-message').fill('hi');
      await tab.locator('.rw-send').click();
      await tab.locator('.rw-client', { hasText: 'hi' }).waitFor();
      await tab.locator('.rw-response', { hasText: 'Hi there! How is your day going?' }).waitFor();
      await tab.locator('.rw-reply', { hasText: /^good$/ }).waitFor();
      await tab.locator('.rw-reply', { hasText: 'not so good' }).waitFor();
      expect(await tab.locator('.rw-response').allInnerTexts()).toEqual([
        'I am a bot, built with Parley.',
        'Hi there! How is your day going?',
      ]);
      // A quick reply sends its payload (/mood_great) through the socket.
      await tab.locator('.rw-reply', { hasText: /^good$/ }).click();
      await tab.locator('.rw-response', { hasText: 'Glad to hear it. Keep it up!' }).waitFor();
    } finally {
      await tab.close();
    }
  });
});
