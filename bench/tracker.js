'use strict';
/* global __filename, fetch, AbortSignal -- Node globals missing from the repo's eslint JS globals */
// Tracker HTTP benchmark: Parley's tracker routes against a bare NestJS route, on loopback.
//
//   npm run build && node bench/tracker.js [--duration 10] [--connections 10] [--ids 200]
//
// (a) GET /ping on a minimal Nest app (one controller, no middleware) — the framework ceiling;
// (b) POST /conversations/<id>/tracker/events?include_events=NONE, one slot event per request,
//     rotating over --ids conversations (target: ≥ 40 % of (a) req/s);
// (c) GET /conversations/<id>/tracker on a 20-event conversation (default AFTER_RESTART);
// (d) sequential GET /conversations/<id>/tracker?include_events=ALL (and NONE) on a 10,000-event
//     conversation seeded by one PUT (target: p95 < 50 ms).
// Each server runs in its own child process, so autocannon (this process) does not share an event
// loop with the server it measures. Database: DATABASE_URL's server (a fresh `parley_bench_<ts>`
// database, dropped afterwards) or a throwaway embedded PostgreSQL. Results: console table and
// bench/results/tracker.json.
const { fork } = require('node:child_process');
const {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Buffer } = require('node:buffer');
const { clearTimeout, setTimeout } = require('node:timers');
const { URL } = require('node:url');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const RESULTS = path.join(__dirname, 'results', 'tracker.json');
const DOMAIN_FILE = path.join(ROOT, 'examples', 'moodbot', 'domain.yml');
const TARGET_RATIO = 0.4;
const TARGET_LARGE_P95_MS = 50;
const LARGE_EVENTS = 10_000;
const SMALL_EVENTS = 20;
const SEQUENTIAL_SAMPLES = 50;
const SEQUENTIAL_WARMUP = 5;
const REQUEST_TIMEOUT_MS = 30_000;
const SERVER_START_TIMEOUT_MS = 180_000;
const WATCHDOG_MS = 15 * 60_000;

function need(file) {
  const full = path.join(DIST, file);
  if (!existsSync(full)) throw new Error(`${full} is missing: run "npm run build" first`);
  return require(full);
}

function parseArgs(argv) {
  const opts = { duration: 10, connections: 10, ids: 200, warmup: 2 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in opts)) {
      throw new Error(`unknown option ${argv[i]} (known: ${Object.keys(opts).join(', ')})`);
    }
    const value = Number(argv[++i]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${key} needs a number`);
    opts[key] = value;
  }
  return opts;
}

// ---------------------------------------------------------------------------------------------
// Child processes: `node bench/tracker.js --serve bare|parley`; they report {port} over IPC and
// close on a 'close' message.

async function serveBare() {
  require('reflect-metadata');
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  class PingController {
    ping() {
      return { ok: true };
    }
  }
  Get('ping')(
    PingController.prototype,
    'ping',
    Object.getOwnPropertyDescriptor(PingController.prototype, 'ping'),
  );
  Controller()(PingController);
  class PingModule {}
  Module({ controllers: [PingController] })(PingModule);
  const app = await NestFactory.create(PingModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

async function serveParley(databaseUrl) {
  const { createParleyApp } = need('bootstrap/create-app.js');
  const { validateEnv } = need('platform/config/validate-env.js');
  const { AssistantRegistry } = need('modules/assistant/assistant.registry.js');
  const { Domain } = need('core/index.js');
  const config = validateEnv({
    PARLEY_ENABLE_API: 'true',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '20',
  });
  const app = await createParleyApp(config, databaseUrl);
  await app.listen(0, '127.0.0.1');
  const domain = Domain.fromYaml(readFileSync(DOMAIN_FILE, 'utf8'), 'domain.yml');
  app
    .get(AssistantRegistry)
    .load({ domain, modelId: 'bench', modelFile: null, assistantId: 'bench' });
  return app;
}

async function childMain(kind) {
  const app =
    kind === 'bare' ? await serveBare() : await serveParley(process.env.BENCH_DATABASE_URL);
  process.on('message', (message) => {
    if (message === 'close') {
      app.close().finally(() => process.exit(0));
    }
  });
  process.send({ port: app.getHttpServer().address().port });
}

function startServer(kind, env) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--serve', kind], {
      env: { ...process.env, ...env },
      stdio: 'inherit',
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${kind} server did not start within ${SERVER_START_TIMEOUT_MS} ms`));
    }, SERVER_START_TIMEOUT_MS);
    child.once('message', ({ port }) => {
      clearTimeout(timer);
      resolve({
        kind,
        url: `http://127.0.0.1:${port}`,
        close: () => stopChild(child),
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} server exited with code ${code} before listening`));
    });
  });
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.send('close');
  });
}

// ---------------------------------------------------------------------------------------------
// Database: DATABASE_URL's server with a fresh database, or a throwaway embedded PostgreSQL.

async function startDatabase() {
  const { Client } = require('pg');
  if (process.env.DATABASE_URL) {
    const serverUrl = process.env.DATABASE_URL;
    const name = `parley_bench_${Date.now().toString(36)}`;
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return {
      kind: `external (${url.host}/${name})`,
      url: url.toString(),
      async stop() {
        const client = new Client({ connectionString: serverUrl });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  }
  const { startEmbeddedPostgres } = need('platform/database/embedded-postgres.launcher.js');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-pg-'));
  const handle = await startEmbeddedPostgres({
    dataDir,
    port: null,
    persistent: false,
    database: 'postgres',
  });
  return {
    kind: 'embedded PostgreSQL',
    url: handle.url,
    async stop() {
      await handle.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

async function request(method, url, body) {
  const started = process.hrtime.bigint();
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.status !== 200) {
    throw new Error(`${method} ${url} → ${res.status}: ${text.slice(0, 500)}`);
  }
  return { ms, bytes: Buffer.byteLength(text), json: JSON.parse(text) };
}

function trackerUrl(base, id, suffix = '', query = '') {
  return `${base}/conversations/${encodeURIComponent(id)}/tracker${suffix}${query}`;
}

/** A realistic event history of `count` events: a session start, then user/action/bot turns. */
function conversationEvents(count) {
  const t0 = 1_700_000_000;
  const events = [
    { event: 'action', timestamp: t0, name: 'action_session_start', policy: null, confidence: 1 },
    { event: 'session_started', timestamp: t0 + 0.001 },
    {
      event: 'action',
      timestamp: t0 + 0.002,
      name: 'action_listen',
      policy: null,
      confidence: null,
    },
  ];
  const intents = ['greet', 'mood_great', 'mood_unhappy', 'affirm', 'goodbye'];
  for (let turn = 0; events.length < count; turn++) {
    const t = t0 + 1 + turn;
    const intent = intents[turn % intents.length];
    const turnEvents = [
      {
        event: 'user',
        timestamp: t,
        text: `message ${turn} (${intent})`,
        parse_data: {
          intent: { name: intent, confidence: 0.93 },
          entities: [],
          text: `message ${turn} (${intent})`,
          intent_ranking: [{ name: intent, confidence: 0.93 }],
        },
        input_channel: 'rest',
        message_id: `m${turn}`,
      },
      {
        event: 'action',
        timestamp: t + 0.1,
        name: 'utter_greet',
        policy: 'RulePolicy',
        confidence: 1,
      },
      {
        event: 'bot',
        timestamp: t + 0.2,
        text: 'Hey! How are you?',
        data: {},
        metadata: { utter_action: 'utter_greet' },
      },
      {
        event: 'action',
        timestamp: t + 0.3,
        name: 'action_listen',
        policy: 'RulePolicy',
        confidence: 1,
      },
    ];
    events.push(...turnEvents.slice(0, count - events.length));
  }
  return events;
}

// ---------------------------------------------------------------------------------------------
// Measurements

function autocannonRun(opts) {
  const autocannon = require('autocannon');
  return new Promise((resolve, reject) => {
    autocannon({ timeout: 10, ...opts }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

function summarizeCannon(name, result) {
  const ok = result['2xx'];
  return {
    name,
    reqPerSec: round(ok / result.duration, 1),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    requests: ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: round(result.duration, 2),
  };
}

async function cannon(name, opts, bench) {
  if (bench.warmup > 0) await autocannonRun({ ...opts, duration: bench.warmup });
  const result = await autocannonRun({ ...opts, duration: bench.duration });
  return summarizeCannon(name, result);
}

function percentile(sorted, p) {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

function round(value, digits = 2) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

async function sequential(name, url) {
  for (let i = 0; i < SEQUENTIAL_WARMUP; i++) await request('GET', url);
  const times = [];
  let bytes = 0;
  let events = null;
  for (let i = 0; i < SEQUENTIAL_SAMPLES; i++) {
    const res = await request('GET', url);
    times.push(res.ms);
    bytes = res.bytes;
    events = Array.isArray(res.json.events) ? res.json.events.length : res.json.events;
  }
  times.sort((x, y) => x - y);
  return {
    name,
    samples: times.length,
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    maxMs: round(times[times.length - 1]),
    meanMs: round(times.reduce((s, t) => s + t, 0) / times.length),
    responseBytes: bytes,
    eventsInResponse: events,
  };
}

function check(condition, message) {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

async function runBenchmarks(bare, parley, bench) {
  const results = {};
  const base = { connections: bench.connections };

  // (a) bare Nest route
  results.a = await cannon('(a) bare Nest GET /ping', { ...base, url: `${bare.url}/ping` }, bench);

  // (b) POST one event, rotating over bench.ids conversations (created beforehand, so the
  // measurement is steady-state appends, not session starts).
  const runId = Date.now().toString(36);
  const ids = Array.from({ length: bench.ids }, (_, i) => `bench-${runId}-${i}`);
  const slotEvent = (n) => ({ event: 'slot', name: 'bench_value', value: `v${n}` });
  for (let i = 0; i < ids.length; i += bench.connections) {
    await Promise.all(
      ids
        .slice(i, i + bench.connections)
        .map((id) =>
          request(
            'POST',
            trackerUrl(parley.url, id, '/events', '?include_events=NONE'),
            slotEvent(0),
          ),
        ),
    );
  }
  const sample = await request(
    'POST',
    trackerUrl(parley.url, ids[0], '/events', '?include_events=NONE'),
    slotEvent(1),
  );
  check(
    sample.json.events === null,
    `include_events=NONE should give events null, got ${JSON.stringify(sample.json.events)}`,
  );
  check(sample.json.sender_id === ids[0], 'POST events returns the tracker of the conversation');
  let next = 0;
  results.b = await cannon(
    `(b) POST tracker/events (${bench.ids} ids)`,
    {
      ...base,
      url: parley.url,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => {
            const n = next++;
            req.path = `/conversations/${ids[n % ids.length]}/tracker/events?include_events=NONE`;
            req.body = JSON.stringify(slotEvent(n));
            return req;
          },
        },
      ],
    },
    bench,
  );
  results.b.ratioToBare = round(results.b.reqPerSec / results.a.reqPerSec, 3);

  // (c) GET tracker of a 20-event conversation
  const smallId = `bench-${runId}-small`;
  await request(
    'PUT',
    trackerUrl(parley.url, smallId, '/events'),
    conversationEvents(SMALL_EVENTS),
  );
  const small = await request('GET', trackerUrl(parley.url, smallId));
  check(
    small.json.events.length === SMALL_EVENTS,
    `GET tracker should return ${SMALL_EVENTS} events, got ${small.json.events.length}`,
  );
  results.c = await cannon(
    `(c) GET tracker (${SMALL_EVENTS} events)`,
    { ...base, url: trackerUrl(parley.url, smallId) },
    bench,
  );
  results.c.responseBytes = small.bytes;

  // (d) 10,000-event conversation: one PUT, then sequential GETs
  const largeId = `bench-${runId}-large`;
  const largeEvents = conversationEvents(LARGE_EVENTS);
  const put = await request(
    'PUT',
    trackerUrl(parley.url, largeId, '/events', '?include_events=NONE'),
    largeEvents,
  );
  results.d_put = {
    name: `(d) PUT ${LARGE_EVENTS} events (one request)`,
    ms: round(put.ms),
    requestBytes: Buffer.byteLength(JSON.stringify(largeEvents)),
  };
  results.d_all = await sequential(
    `(d) GET tracker ALL, ${LARGE_EVENTS} events`,
    trackerUrl(parley.url, largeId, '', '?include_events=ALL'),
  );
  check(
    results.d_all.eventsInResponse === LARGE_EVENTS,
    `ALL should return ${LARGE_EVENTS} events, got ${results.d_all.eventsInResponse}`,
  );
  results.d_none = await sequential(
    `(d) GET tracker NONE, ${LARGE_EVENTS} events`,
    trackerUrl(parley.url, largeId, '', '?include_events=NONE'),
  );
  return results;
}

function printTable(results) {
  const rows = [
    ...['a', 'b', 'c'].map((k) => {
      const r = results[k];
      return {
        benchmark: r.name,
        'req/s': r.reqPerSec,
        'p50 ms': r.p50Ms,
        'p99/p95 ms': r.p99Ms,
        'max ms': r.maxMs,
        'non2xx+err': r.non2xx + r.errors,
      };
    }),
    {
      benchmark: results.d_put.name,
      'req/s': '',
      'p50 ms': results.d_put.ms,
      'p99/p95 ms': '',
      'max ms': '',
      'non2xx+err': 0,
    },
    ...['d_all', 'd_none'].map((k) => {
      const r = results[k];
      return {
        benchmark: r.name,
        'req/s': '',
        'p50 ms': r.p50Ms,
        'p99/p95 ms': r.p95Ms,
        'max ms': r.maxMs,
        'non2xx+err': 0,
      };
    }),
  ];
  console.log('\n(a)–(c): autocannon, p99; (d): sequential samples, p95\n');
  console.table(rows);
}

async function main() {
  const bench = parseArgs(process.argv.slice(2));
  const watchdog = setTimeout(() => {
    console.error(`bench/tracker.js: still running after ${WATCHDOG_MS / 60000} min, aborting`);
    process.exit(2);
  }, WATCHDOG_MS);
  watchdog.unref();

  const cleanups = [];
  const cleanup = async () => {
    while (cleanups.length > 0) {
      const step = cleanups.pop();
      await step().catch((error) => console.error('cleanup failed:', error.message));
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));
  }
  try {
    console.log('starting database…');
    const db = await startDatabase();
    cleanups.push(() => db.stop());
    console.log(`database: ${db.kind}; starting servers…`);
    const bare = await startServer('bare', {});
    cleanups.push(() => bare.close());
    const parley = await startServer('parley', { BENCH_DATABASE_URL: db.url });
    cleanups.push(() => parley.close());
    console.log(
      `running: ${bench.duration} s per autocannon run (+${bench.warmup} s warm-up), ${bench.connections} connections`,
    );

    const loadBefore = os.loadavg().map((l) => round(l));
    if (loadBefore[0] > os.cpus().length * 0.5) {
      console.warn(
        `warning: load average ${loadBefore[0]} on ${os.cpus().length} CPUs — figures will be noisy`,
      );
    }
    const results = await runBenchmarks(bare, parley, bench);
    const verdict = {
      postVsBareRatio: results.b.ratioToBare,
      postVsBareTarget: TARGET_RATIO,
      postVsBarePass: results.b.ratioToBare >= TARGET_RATIO,
      largeAllP95Ms: results.d_all.p95Ms,
      largeAllTargetMs: TARGET_LARGE_P95_MS,
      largeAllPass: results.d_all.p95Ms < TARGET_LARGE_P95_MS,
    };
    printTable(results);
    console.log(
      `POST events / bare Nest: ${(verdict.postVsBareRatio * 100).toFixed(1)} % (target ≥ ${TARGET_RATIO * 100} %) → ${verdict.postVsBarePass ? 'PASS' : 'FAIL'}`,
    );
    console.log(
      `GET tracker ALL on ${LARGE_EVENTS} events: p95 ${verdict.largeAllP95Ms} ms (target < ${TARGET_LARGE_P95_MS} ms) → ${verdict.largeAllPass ? 'PASS' : 'FAIL'}`,
    );
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadAverage1m: { before: loadBefore[0], after: round(os.loadavg()[0]) },
      database: db.kind,
      options: bench,
      results,
      verdict,
    };
    mkdirSync(path.dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`\nwritten ${path.relative(ROOT, RESULTS)}`);
  } finally {
    await cleanup();
  }
}

if (process.argv[2] === '--serve') {
  childMain(process.argv[3]).catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
