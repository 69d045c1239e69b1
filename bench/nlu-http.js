'use strict';
// NLU HTTP benchmark: POST /model/parse on a trained moodbot model against a bare NestJS route.
//
//   npm run build && node bench/nlu-http.js [--duration 10] [--warmup 2] [--connections 8]
//                                           [--epochs 60]
//
// 1. trains the moodbot NLU (`parley train`, DIET epochs raised to --epochs) into a temp dir;
// 2. starts `parley run --enable-api --model <tmp>` at the server's default log level (info;
//    LOG_LEVEL in the environment overrides it), its log discarded, on a free port, and the
//    bare Nest app (bench/lib/bare-server.js), each in its own process;
// 3. autocannon: (a) GET /ping on the bare app, (b) POST /model/parse rotating over realistic
//    moodbot utterances (target: (b) req/s ≥ 80 % of (a)).
// Database: DATABASE_URL's server (a fresh `parley_bench_<ts>` database, dropped afterwards), or
// the embedded PostgreSQL `parley run` starts itself, with PARLEY_DATA_DIR in the temp dir.
// Results: console table and bench/results/nlu-http.json.
const {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout } = require('node:timers');
const {
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
const {
  MOODBOT: BOT,
  ROOT,
  moodbotFiles,
  parseNumberArgs,
  sleep,
  startParley,
  trainParley,
  writeResults,
} = require('./lib/parley');

const DIST_CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const RESULTS = path.join(__dirname, 'results', 'nlu-http.json');
/** The NLU target: /model/parse at 8 in flight keeps 80 % of a bare route's req/s. */
const TARGET_RATIO = 0.8;
const TRAIN_TIMEOUT_MS = 5 * 60_000;
const STOP_TIMEOUT_MS = 20_000;
const WATCHDOG_MS = 10 * 60_000;

/** Realistic moodbot messages, mostly phrased differently from the training data. */
const UTTERANCES = [
  ['hello there, how are you doing?', 'greet'],
  ['hey bot, good morning', 'greet'],
  ['hi!', 'greet'],
  ['ok bye, see you tomorrow', 'goodbye'],
  ['goodbye and have a nice evening', 'goodbye'],
  ['yes, that is right', 'affirm'],
  ['sure, sounds good', 'affirm'],
  ['of course', 'affirm'],
  ['no, not really', 'deny'],
  ['I don’t think so', 'deny'],
  ["I'm feeling great today", 'mood_great'],
  ['I am very happy, thanks for asking', 'mood_great'],
  ['wonderful, everything is perfect', 'mood_great'],
  ['I feel sad and tired', 'mood_unhappy'],
  ['my day was terrible', 'mood_unhappy'],
  ["I'm so unhappy right now", 'mood_unhappy'],
  ['are you a bot?', 'bot_challenge'],
  ['am I talking to a real human?', 'bot_challenge'],
].map(([text, expected]) => ({ text, expected }));

function parseArgs(argv) {
  return parseNumberArgs(argv, { duration: 10, connections: 8, warmup: 2, epochs: 60 });
}

// ---------------------------------------------------------------------------------------------
// Training

/** The bot's config.yml with DIETClassifier's `epochs` set to `epochs` (and nothing else). */
function dietConfig(text, epochs) {
  const lines = text.split('\n');
  let dietIndent = null;
  let replaced = 0;
  for (let i = 0; i < lines.length; i++) {
    const item = /^(\s*)- name:\s*["']?(\w+)/.exec(lines[i]);
    if (item) {
      dietIndent = item[2] === 'DIETClassifier' ? item[1].length : null;
      continue;
    }
    if (dietIndent === null) continue;
    const indent = /^\s*/.exec(lines[i])[0].length;
    if (lines[i].trim() !== '' && indent <= dietIndent) {
      dietIndent = null;
    } else if (/^\s*epochs:/.test(lines[i])) {
      lines[i] = lines[i].replace(/epochs:.*$/, `epochs: ${epochs}`);
      replaced++;
    }
  }
  if (replaced !== 1) throw new Error(`expected one DIETClassifier epochs line, found ${replaced}`);
  return lines.join('\n');
}

async function train(tmp, epochs) {
  const config = path.join(tmp, 'config.yml');
  writeFileSync(config, dietConfig(readFileSync(path.join(BOT, 'config.yml'), 'utf8'), epochs));
  const out = path.join(tmp, 'models');
  const model = await trainParley({ ...moodbotFiles(), config, out, timeout: TRAIN_TIMEOUT_MS });
  return { ...model, epochs };
}

// ---------------------------------------------------------------------------------------------
// Measurements

const INTENT_NAMED = /"intent":\{[^}]*"name":"[^"]/;

async function checkParse(url) {
  const predictions = [];
  for (const { text, expected } of UTTERANCES) {
    const { json } = await request('POST', `${url}/model/parse`, { text });
    check(json.text === text, `parse echoes the text (${JSON.stringify(json.text)})`);
    check(
      typeof json.intent?.name === 'string' && json.intent.name !== '',
      `"${text}" → empty intent ${JSON.stringify(json.intent)}`,
    );
    check(
      Array.isArray(json.intent_ranking) && json.intent_ranking.length > 0,
      `"${text}" → empty intent_ranking`,
    );
    check(INTENT_NAMED.test(JSON.stringify(json)), 'response matches the load-time intent check');
    predictions.push({
      text,
      expected,
      intent: json.intent.name,
      confidence: round(json.intent.confidence, 3),
    });
  }
  return predictions;
}

async function runBenchmarks(bare, parley, bench) {
  const results = {};
  const ping = await request('GET', `${bare.url}/ping`);
  check(ping.json.ok === true, 'bare GET /ping returns {ok: true}');
  results.a = await cannon(
    '(a) bare Nest GET /ping',
    { connections: bench.connections, url: `${bare.url}/ping` },
    bench,
    bare.pid,
  );

  const bodies = UTTERANCES.map(({ text }) => JSON.stringify({ text }));
  /** autocannon's request list: POST `path` with the bodies in turn. */
  const posting = (path, onResponse) => {
    let next = 0;
    return [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          req.body = bodies[next++ % bodies.length];
          return req;
        },
        ...(onResponse ? { onResponse } : {}),
      },
    ];
  };
  let badBodies = 0;
  results.b = await cannon(
    `(b) POST /model/parse (${UTTERANCES.length} utterances)`,
    {
      connections: bench.connections,
      url: parley.url,
      requests: posting('/model/parse', (status, body) => {
        if (status !== 200 || !INTENT_NAMED.test(body)) badBodies++;
      }),
    },
    bench,
    parley.pid,
  );
  results.b.responsesWithoutIntent = badBodies;

  // Information: the bare app's POST route with the same bodies — what reading a JSON body
  // costs any Nest route, which GET /ping does not pay.
  results.c = await cannon(
    `(c) bare Nest POST /echo (same bodies)`,
    { connections: bench.connections, url: bare.url, requests: posting('/echo') },
    bench,
    bare.pid,
  );
  results.b.ratioToBarePost = round(results.b.reqPerSec / results.c.reqPerSec, 3);
  if (results.c.cpuUsPerReq !== undefined && results.b.cpuUsPerReq !== undefined) {
    results.b.cpuRatioToBarePost = round(results.c.cpuUsPerReq / results.b.cpuUsPerReq, 3);
  }
  results.b.ratioToBare = round(results.b.reqPerSec / results.a.reqPerSec, 3);
  if (results.a.cpuUsPerReq !== undefined && results.b.cpuUsPerReq !== undefined) {
    // Server CPU per request: how many parses a core serves relative to bare pings.
    results.b.cpuRatioToBare = round(results.a.cpuUsPerReq / results.b.cpuUsPerReq, 3);
  }
  for (const r of [results.a, results.b, results.c]) {
    check(r.non2xx === 0 && r.errors === 0 && r.timeouts === 0, `${r.name}: all responses 200`);
  }
  check(badBodies === 0, `${badBodies} /model/parse responses without a 200 and an intent name`);
  return results;
}

function printTable(results) {
  console.log('\nautocannon, after warm-up\n');
  console.table(
    [results.a, results.b, results.c].map((r) => ({
      benchmark: r.name,
      'req/s': r.reqPerSec,
      'p50 ms': r.p50Ms,
      'p99 ms': r.p99Ms,
      'max ms': r.maxMs,
      'server CPU µs/req': r.cpuUsPerReq ?? 'n/a',
      requests: r.requests,
      'non2xx+err': r.non2xx + r.errors,
    })),
  );
}

async function main() {
  const bench = parseArgs(process.argv.slice(2));
  if (!existsSync(DIST_CLI)) {
    throw new Error(`${DIST_CLI} is missing: run "npm run build" first`);
  }
  const cleanups = cleanupStack();
  const watchdog = setTimeout(() => {
    console.error(`bench/nlu-http.js: still running after ${WATCHDOG_MS / 60000} min, aborting`);
    void Promise.race([cleanups.run(), sleep(STOP_TIMEOUT_MS + 10_000)]).finally(() =>
      process.exit(2),
    );
  }, WATCHDOG_MS);
  watchdog.unref();
  try {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-nlu-'));
    // Readable by others: as root, the embedded PostgreSQL runs as the `postgres` user under it.
    chmodSync(tmp, 0o755);
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));

    console.log(`training the moodbot NLU (DIET epochs ${bench.epochs})…`);
    const model = await train(tmp, bench.epochs);
    console.log(`trained in ${(model.ms / 1000).toFixed(1)} s: ${path.basename(model.archive)}`);

    // The default log level, as users run it (the other benches run silent).
    const env = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' };
    let database = 'embedded PostgreSQL (started by parley run)';
    if (process.env.DATABASE_URL) {
      const db = await createScratchDatabase(process.env.DATABASE_URL);
      cleanups.push(() => db.stop());
      env.DATABASE_URL = db.url;
      database = db.kind;
    } else {
      env.PARLEY_DATA_DIR = path.join(tmp, 'parley-data');
    }
    console.log(`database: ${database}; starting servers…`);
    const bare = await forkServer(path.join(__dirname, 'lib', 'bare-server.js'), [], 'bare', {});
    cleanups.push(() => bare.close());
    const parley = await startParley(model.dir, env, { output: 'ignore' });
    console.log(`parley serves ${parley.status.model_file}`);
    cleanups.push(() => parley.close());
    const predictions = await checkParse(parley.url);
    const correct = predictions.filter((p) => p.intent === p.expected).length;
    console.log(`sample parses: ${correct}/${predictions.length} intents as expected`);
    console.log(
      `running: ${bench.duration} s per autocannon run (+${bench.warmup} s warm-up), ${bench.connections} connections`,
    );

    const loadBefore = loadAverage({ warn: true });
    const results = await runBenchmarks(bare, parley, bench);
    const loadAfter = loadAverage();
    const verdict = {
      parseVsBareRatio: results.b.ratioToBare,
      parseVsBareTarget: TARGET_RATIO,
      parseVsBarePass: results.b.ratioToBare >= TARGET_RATIO,
    };
    printTable(results);
    console.log(
      `POST /model/parse / bare Nest: ${(verdict.parseVsBareRatio * 100).toFixed(1)} % (target ≥ ${TARGET_RATIO * 100} %) → ${verdict.parseVsBarePass ? 'PASS' : 'FAIL'}`,
    );
    if (results.b.cpuRatioToBare !== undefined) {
      console.log(
        `server CPU per request, bare / parse: ${(results.b.cpuRatioToBare * 100).toFixed(1)} % (the req/s ratio a server with a core of its own would reach; information)`,
      );
    }
    console.log(
      `POST /model/parse / bare Nest POST /echo with the same bodies: ${(results.b.ratioToBarePost * 100).toFixed(1)} % by req/s${results.b.cpuRatioToBarePost === undefined ? '' : `, ${(results.b.cpuRatioToBarePost * 100).toFixed(1)} % by server CPU`} (information)`,
    );
    console.log(
      `load average (1/5/15 min): before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')} on ${os.cpus().length} CPUs`,
    );
    const report = {
      date: new Date().toISOString(),
      ...machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      database,
      options: bench,
      model: {
        archive: path.basename(model.archive),
        servedModelFile: parley.status.model_file,
        dietEpochs: model.epochs,
        trainMs: model.ms,
        sampleAccuracy: round(correct / predictions.length, 3),
      },
      predictions,
      results,
      verdict,
    };
    writeResults(RESULTS, report);
    console.log(`\nwritten ${path.relative(ROOT, RESULTS)}`);
  } finally {
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
