'use strict';
/* global fetch -- Node global missing from the repo's eslint JS globals */
// Channel benchmark: conversation turns of the moodbot through the rest webhook, the socketio
// channel (socket.io client) and the callback channel (replies POSTed to a loopback receiver).
//
//   npm run build && node bench/channels.js [--conversations 10,50] [--turns 20]
//
// 1. trains the test mood bot (`parley train`, test/fixtures/moodbot/config.full.yml);
// 2. starts `parley run --model <tmp> --credentials <tmp>` (socketio + callback, LOG_LEVEL=silent)
//    in its own process;
// 3. for each conversation count: every conversation sends --turns messages one after the other
//    (alternately "hi" → utter_greet and "great" → utter_happy), all conversations at once;
//    a turn's latency runs from sending to receiving the bot's reply (the HTTP answer for rest,
//    the first `bot_uttered` for socketio, the `success` answer — after the callback POST — for
//    callback). Each reply is checked. So rest and callback time the whole turn (persisted
//    before the answer), socketio the time to the first reply (emitted while the turn runs).
//    A first round of 5 conversations × 4 turns per channel warms up and is not reported.
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards), or
// the embedded PostgreSQL `parley run` starts itself, in the temp dir.
const { spawn } = require('node:child_process');
const { chmodSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { io } = require('socket.io-client');
const {
  check,
  cleanupStack,
  createScratchDatabase,
  loadAverage,
  machine,
  round,
} = require('./lib/http-bench');
const { BIN, ROOT, freePort, moodbotFiles, trainParley } = require('./lib/parley');

const TURNS = [
  ['hi', 'Hi there! How is your day going?'],
  ['great', 'Glad to hear it. Keep it up!'],
];

function parseArgs(argv) {
  const opts = { conversations: [10, 50], turns: 20 };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--conversations') opts.conversations = argv[i + 1].split(',').map(Number);
    else if (argv[i] === '--turns') opts.turns = Number(argv[i + 1]);
    else throw new Error(`unknown option ${argv[i]} (known: --conversations, --turns)`);
  }
  return opts;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `conversations` conversations of `turns` turns at once; `turn(c, i)` resolves a reply. */
async function measure(name, conversations, turns, open, turn, close) {
  const clients = await Promise.all(Array.from({ length: conversations }, (_, c) => open(c)));
  const latencies = [];
  const started = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < turns; i++) {
        const [text, expected] = TURNS[i % TURNS.length];
        const t0 = process.hrtime.bigint();
        const reply = await turn(client, text);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        check(reply === expected, `${name}: "${text}" answered ${JSON.stringify(reply)}`);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(clients.map((c) => close(c)));
  latencies.sort((a, b) => a - b);
  return {
    channel: name,
    conversations,
    turns: latencies.length,
    turnsPerSec: round(latencies.length / seconds, 1),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(latencies[latencies.length - 1]),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const cleanup = cleanupStack();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-channels-'));
  // The embedded PostgreSQL drops root privileges: its data dir must be reachable.
  chmodSync(tmp, 0o755);
  cleanup.push(async () => rmSync(tmp, { recursive: true, force: true }));
  try {
    loadAverage({ warn: true });
    const models = path.join(tmp, 'models');
    await trainParley({ ...moodbotFiles(), out: models });

    // The callback receiver: resolves the waiting turn of each recipient.
    const waiting = new Map();
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const message = JSON.parse(body);
        waiting.get(message.recipient_id)?.(message.text);
        res.end();
      });
    });
    await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => receiver.close(resolve)));
    const credentials = path.join(tmp, 'credentials.yml');
    writeFileSync(
      credentials,
      `socketio:\ncallback:\n  url: http://127.0.0.1:${receiver.address().port}/replies\n`,
    );

    const env = { ...process.env, LOG_LEVEL: 'silent', PARLEY_DATA_DIR: path.join(tmp, 'pg') };
    let database = 'embedded (started by parley run)';
    if (process.env.DATABASE_URL) {
      const db = await createScratchDatabase(process.env.DATABASE_URL);
      cleanup.push(() => db.stop());
      env.DATABASE_URL = db.url;
      database = db.kind;
    }
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--model', models, '--credentials', credentials, '--port', String(port)],
      { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    cleanup.push(async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await new Promise((resolve) =>
        child.exitCode === null ? child.once('exit', resolve) : resolve(),
      );
    });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const res = await fetch(`${base}/health/ready`).catch(() => null);
      if (res?.status === 200) break;
      check(i < 600 && child.exitCode === null, 'parley run did not become ready');
      await sleep(200);
    }

    const results = [];
    // The first round (5 conversations × 4 turns per channel) warms up and is not reported.
    for (const n of [0, ...opts.conversations]) {
      const warmup = n === 0;
      const conversations = warmup ? 5 : n;
      const turns = warmup ? 4 : opts.turns;
      const batch = [];
      batch.push(
        await measure(
          'rest',
          conversations,
          turns,
          async (c) => `rest-${n}-${c}-${Date.now()}`,
          async (sender, text) => {
            const res = await fetch(`${base}/webhooks/rest/webhook`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ sender, message: text }),
            });
            return (await res.json())[0]?.text;
          },
          async () => undefined,
        ),
      );
      batch.push(
        await measure(
          'socketio',
          conversations,
          turns,
          (c) =>
            new Promise((resolve) => {
              const socket = io(base, { transports: ['websocket'], forceNew: true });
              socket.once('connect', () => resolve(socket));
              void c;
            }),
          (socket, text) =>
            new Promise((resolve) => {
              socket.once('bot_uttered', (m) => resolve(m.text));
              socket.emit('user_uttered', { message: text });
            }),
          async (socket) => socket.close(),
        ),
      );
      batch.push(
        await measure(
          'callback',
          conversations,
          turns,
          async (c) => `callback-${n}-${c}-${Date.now()}`,
          async (sender, text) => {
            let reply;
            waiting.set(sender, (t) => (reply = t));
            const res = await fetch(`${base}/webhooks/callback/webhook`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ sender, message: text }),
            });
            check((await res.text()) === 'success', 'callback webhook answered success');
            return reply;
          },
          async () => undefined,
        ),
      );
      if (!warmup) results.push(...batch);
    }
    console.log(JSON.stringify({ machine: machine(), database, load: loadAverage() }));
    console.table(results);
  } finally {
    await cleanup.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
