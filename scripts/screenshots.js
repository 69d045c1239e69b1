'use strict';
/* global fetch -- Node global missing from the repo's eslint JS globals */
// Screenshots of the development inspector and the conversation review page for the README:
// docs/images/inspector.png and docs/images/review.png. Rerun after a UI change:
//
//   npm run build && node scripts/screenshots.js
//
// It trains the flows bot of the test fixtures, starts `parley run --inspect --enable-api` on a
// free port (a scratch database on DATABASE_URL's server, dropped afterwards, or an embedded
// PostgreSQL; the embedded identity provider with a realm file allowing this origin), makes a
// conversation over the REST channel and drives headless Chromium through the same steps as
// the browser tests, offline (only loopback requests are let through).
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { URL } = require('node:url');
const { chromium } = require('playwright-core');
const { startDatabase } = require('../bench/lib/http-bench');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'parley.js');
const BOT = path.join(ROOT, 'test', 'fixtures', 'flowsbot');
const OUT = path.join(ROOT, 'docs', 'images');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const LOOPBACK = new Set(['127.0.0.1', 'localhost']);
const VIEWPORT = { width: 1280, height: 760 };

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, child, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`parley run exited (${child.exitCode})`);
    try {
      const res = await fetch(`${url}/status`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`parley run did not answer at ${url} in time`);
}

async function say(url, sender, message) {
  const res = await fetch(`${url}/webhooks/rest/webhook`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ sender, message }),
  });
  if (!res.ok) throw new Error(`REST channel answered ${res.status}`);
}

async function offlinePage(browser) {
  const page = await browser.newPage({ viewport: VIEWPORT });
  await page.route('**/*', (route) =>
    LOOPBACK.has(new URL(route.request().url()).hostname) ? route.continue() : route.abort(),
  );
  return page;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-screenshots-'));
  const cleanup = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const models = path.join(dir, 'models');
    const trained = spawnSync(
      process.execPath,
      [
        BIN,
        'train',
        '--data',
        path.join(BOT, 'data'),
        '--domain',
        path.join(BOT, 'domain.yml'),
      ].concat(['--config', path.join(BOT, 'config.yml'), '--out', models]),
      { stdio: 'inherit' },
    );
    if (trained.status !== 0) throw new Error('training the flows bot failed');

    const database = await startDatabase();
    cleanup.push(() => database.stop());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const secret = randomBytes(16).toString('hex');
    // The default realm, with this page's origin as the client's web origin.
    const realm = JSON.parse(
      readFileSync(path.join(ROOT, 'keycloak', 'parley-realm.json'), 'utf8'),
    );
    for (const client of realm.clients) client.webOrigins = [url];
    const realmFile = path.join(dir, 'realm.json');
    writeFileSync(realmFile, JSON.stringify(realm));

    const server = spawn(
      process.execPath,
      [BIN, 'run', '--inspect', '--enable-api', '--model', models, '--port', String(port)],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          PARLEY_DATA_DIR: path.join(dir, 'data'),
          OIDC_REALM_FILE: realmFile,
          OIDC_EMBEDDED_PORT: '0',
          PARLEY_OIDC_CLIENT_SECRET: secret,
          LOG_LEVEL: 'warn',
        },
      },
    );
    cleanup.push(
      () =>
        new Promise((resolve) => {
          if (server.exitCode !== null) return resolve();
          server.once('exit', resolve);
          server.kill('SIGTERM');
        }),
    );
    await waitForServer(url, server, 180_000);

    const sender = `screenshot-${Date.now().toString(36)}`;
    await say(url, sender, 'when are you open');
    await say(url, sender, 'book a repair');
    await say(url, sender, 'road');

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    cleanup.push(() => browser.close());
    mkdirSync(OUT, { recursive: true });

    // The inspector's rest page following the conversation, on its flow tab.
    const inspector = await offlinePage(browser);
    await inspector.goto(`${url}/webhooks/rest/inspect.html?sender=${sender}`);
    await inspector.locator('#messages li.bot', { hasText: 'Which day' }).waitFor();
    await inspector.locator('[role="tab"][data-tab="flow"]').click();
    await inspector.locator('#flow .step.active').waitFor();
    await inspector.screenshot({ path: path.join(OUT, 'inspector.png') });

    // The review page: signed in, the conversation open, a tag on it.
    const review = await offlinePage(browser);
    await review.goto(`${url}/review/`);
    await review.locator('#client-id').fill('parley-external');
    await review.locator('#client-secret').fill(secret);
    await review.locator('#sign-in-button').click();
    const row = review.locator(`#conversations tbody tr[data-id="${sender}"]`);
    await row.waitFor();
    await row.click();
    await review.locator('#transcript li.bot', { hasText: 'Which day' }).waitFor();
    await review.locator('#new-tag').fill('needs-review');
    await review.locator('#add-tag').click();
    await review.locator('#conversation-tags li', { hasText: 'needs-review' }).waitFor();
    await review.screenshot({ path: path.join(OUT, 'review.png') });
    process.stdout.write(`wrote ${path.relative(ROOT, OUT)}/inspector.png and review.png\n`);
  } finally {
    for (const step of cleanup.reverse()) {
      await Promise.resolve()
        .then(step)
        .catch((error) => process.stderr.write(`cleanup: ${error.message}\n`));
    }
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exitCode = 1;
});
