'use strict';
/* global __filename -- a Node global missing from the repo's eslint JS globals */
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
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Buffer } = require('node:buffer');
const { setTimeout } = require('node:timers');
const {
  cannon,
  check,
  cleanupStack,
  forkServer,
  loadAverage,
  machine,
  need,
  request,
  round,
  serveBare,
  serveOverIpc,
  startDatabase,
} = require('./lib/http-bench');
const { parseNumberArgs } = require('./lib/parley');

const ROOT = path.resolve(__dirname, '..');
const RESULTS = path.join(__dirname, 'results', 'tracker.json');
const DOMAIN_FILE = path.join(ROOT, 'test', 'fixtures', 'moodbot', 'domain.yml');
const TARGET_RATIO = 0.4;
const TARGET_LARGE_P95_MS = 50;
const LARGE_EVENTS = 10_000;
const SMALL_EVENTS = 20;
const SEQUENTIAL_SAMPLES = 50;
const SEQUENTIAL_WARMUP = 5;
const WATCHDOG_MS = 15 * 60_000;

function parseArgs(argv) {
  return parseNumberArgs(argv, { duration: 10, connections: 10, ids: 200, warmup: 2 });
}

// ---------------------------------------------------------------------------------------------
// Child processes: `node bench/tracker.js --serve bare|parley`; they report {port} over IPC and
// close on a 'close' message.

async function serveParley(databaseUrl) {
  const { createParleyApp } = need('bootstrap/create-app.js');
  const { validateEnv } = need('platform/config/validate-env.js');
  const { ServedModel } = need('modules/model/index.js');
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
  app.get(ServedModel).load({ domain, modelId: 'bench', modelFile: null, assistantId: 'bench' });
  return app;
}

async function childMain(kind) {
  const app =
    kind === 'bare' ? await serveBare() : await serveParley(process.env.BENCH_DATABASE_URL);
  serveOverIpc(app);
}

function startServer(kind, env) {
  return forkServer(__filename, ['--serve', kind], kind, env);
}

// ---------------------------------------------------------------------------------------------
// Database: DATABASE_URL's server with a fresh database, or a throwaway embedded PostgreSQL.

// ---------------------------------------------------------------------------------------------
// HTTP helpers

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

function percentile(sorted, p) {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
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

  const cleanups = cleanupStack();
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

    const loadBefore = loadAverage({ warn: true });
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
      ...machine(),
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
    await cleanups.run();
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
