'use strict';
/* global fetch, AbortSignal -- Node globals missing from the repo's eslint JS globals */
// Dialogue benchmark: REST channel turns (parse + predict + actions + one persisted append per
// turn) on the bundled moodbot against a bare NestJS route, plus moodbot training time.
//
//   npm run build && node bench/dialogue.js [--duration 10] [--warmup 2]
//
// 1. trains the moodbot (examples/moodbot, config.parley.yml: NLU + policies) with
//    `parley train` into a temp dir and reports the wall time (target < 3 s);
// 2. starts `parley run --enable-api --model <tmp>` and the bare Nest app, each in its own process;
// 3. autocannon with 10 and 50 connections, each connection one conversation (sequential turns):
//    (a) bare GET /ping, (b) POST /webhooks/rest/webhook rotating over moodbot messages.
//    Targets: (b) ≥ 40 % of (a) at 50 conversations, (b) p99 < 15 ms at 10 conversations.
// Database: DATABASE_URL's server (a fresh scratch database, dropped afterwards) or the embedded
// PostgreSQL. Results: console and bench/results/dialogue.json.
const { execFile, spawn } = require('node:child_process');
const { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { clearTimeout, setTimeout } = require('node:timers');
const {
  SERVER_START_TIMEOUT_MS,
  cannon,
  check,
  cleanupStack,
  createScratchDatabase,
  forkServer,
  loadAverage,
  machine,
  request,
  round,
} = require('./lib/http-bench');

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'parley.js');
const DIST_CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const BOT = path.join(ROOT, 'examples', 'moodbot');
const RESULTS = path.join(__dirname, 'results', 'dialogue.json');
const STOP_TIMEOUT_MS = 20_000;
const MESSAGES = ['hello there', 'I am very sad', 'yes it did', 'hi', 'amazing', 'bye'];

function parseArgs(argv) {
  const opts = { duration: 10, warmup: 2 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in opts)) throw new Error(`unknown option ${argv[i]}`);
    opts[key] = Number(argv[i + 1]);
  }
  return opts;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function train(tmp) {
  const out = path.join(tmp, 'models');
  const args = [
    BIN,
    'train',
    '--data',
    path.join(BOT, 'data'),
    '--domain',
    path.join(BOT, 'domain.yml'),
    '--config',
    path.join(BOT, 'config.parley.yml'),
    '--out',
    out,
  ];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, timeout: 300_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`parley train failed (${error.message}):\n${stderr}`));
        return;
      }
      resolve({ dir: out, archive: stdout.trim().split('\n').pop(), ms: Date.now() - started });
    });
  });
}

async function startParley(modelDir, env) {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'run', '--enable-api', '--model', modelDir], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const killGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // group already gone
    }
  };
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    killGroup('SIGKILL');
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`parley run exited (${child.exitCode ?? child.signalCode}) before listening`);
    }
    try {
      const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2_000) });
      const status = await res.json();
      if (res.status === 200 && status.model_file) return { url, status, close };
    } catch {
      // not up yet
    }
    await sleep(250);
  }
  await close();
  throw new Error('parley run did not come up');
}

async function turns(parley, connections, bench, run) {
  let bad = 0;
  const result = await cannon(
    `(b) REST webhook turns, ${connections} conversations`,
    {
      connections,
      url: parley.url,
      requests: [
        {
          method: 'POST',
          path: '/webhooks/rest/webhook',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req, context) => {
            if (context.sender === undefined) {
              context.sender = `bench-${run}-${Math.random().toString(36).slice(2, 10)}`;
              context.turn = 0;
            }
            req.body = JSON.stringify({
              sender: context.sender,
              message: MESSAGES[context.turn++ % MESSAGES.length],
            });
            return req;
          },
          onResponse: (status, body) => {
            if (status !== 200 || !body.startsWith('[{')) bad++;
          },
        },
      ],
    },
    bench,
  );
  result.responsesWithoutBotMessage = bad;
  return result;
}

async function main() {
  const bench = parseArgs(process.argv.slice(2));
  if (!existsSync(DIST_CLI)) throw new Error(`${DIST_CLI} is missing: run "npm run build" first`);
  const cleanups = cleanupStack();
  try {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-dialogue-'));
    chmodSync(tmp, 0o755);
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    const model = await train(tmp);
    console.log(`moodbot trained end to end (NLU + policies) in ${(model.ms / 1000).toFixed(2)} s`);

    const env = {};
    let database = 'embedded PostgreSQL (started by parley run)';
    if (process.env.DATABASE_URL) {
      const db = await createScratchDatabase(process.env.DATABASE_URL);
      cleanups.push(() => db.stop());
      env.DATABASE_URL = db.url;
      database = db.kind;
    } else {
      env.PARLEY_DATA_DIR = path.join(tmp, 'parley-data');
    }
    const bare = await forkServer(path.join(__dirname, 'lib', 'bare-server.js'), [], 'bare', {});
    cleanups.push(() => bare.close());
    const parley = await startParley(model.dir, env);
    cleanups.push(() => parley.close());
    const sample = await request('POST', `${parley.url}/webhooks/rest/webhook`, {
      sender: 'bench-sample',
      message: 'hello there',
    });
    check(
      Array.isArray(sample.json) && sample.json[0]?.text === 'Hey! How are you?',
      'the moodbot greets',
    );

    const loadBefore = loadAverage({ warn: true });
    const results = {};
    for (const connections of [10, 50]) {
      const a = await cannon(
        `(a) bare Nest GET /ping, ${connections} connections`,
        { connections, url: `${bare.url}/ping` },
        bench,
      );
      const b = await turns(parley, connections, bench, connections);
      b.ratioToBare = round(b.reqPerSec / a.reqPerSec, 3);
      for (const r of [a, b]) {
        check(r.non2xx === 0 && r.errors === 0, `${r.name}: all responses 200`);
      }
      results[connections] = { a, b };
      console.log(
        `${connections} conversations: bare ${a.reqPerSec} req/s (p99 ${a.p99Ms} ms); webhook ${b.reqPerSec} turns/s (p50 ${b.p50Ms} ms, p99 ${b.p99Ms} ms) = ${(b.ratioToBare * 100).toFixed(1)} % of bare`,
      );
    }
    const loadAfter = loadAverage();
    const verdict = {
      ratioAt50: results[50].b.ratioToBare,
      ratioAt50Pass: results[50].b.ratioToBare >= 0.4,
      p99At10Ms: results[10].b.p99Ms,
      p99At10Pass: results[10].b.p99Ms < 15,
      trainMs: model.ms,
      trainPass: model.ms < 3000,
    };
    console.log(
      `verdict: ratio@50 ${verdict.ratioAt50Pass ? 'PASS' : 'FAIL'}, p99@10 ${verdict.p99At10Pass ? 'PASS' : 'FAIL'}, train ${verdict.trainPass ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `load average (1/5/15 min): before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')} on ${os.cpus().length} CPUs`,
    );
    mkdirSync(path.dirname(RESULTS), { recursive: true });
    writeFileSync(
      RESULTS,
      `${JSON.stringify({ date: new Date().toISOString(), ...machine(), database, options: bench, results, verdict }, null, 2)}\n`,
    );
  } finally {
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
