'use strict';
// Dialogue benchmark: REST channel turns (parse + predict + actions + one persisted append per
// turn) on the bundled moodbot against a bare NestJS route, plus moodbot training time.
//
//   npm run build && node bench/dialogue.js [--duration 10] [--warmup 2]
//
// 1. trains the mood bot (test/fixtures/moodbot, config.full.yml: NLU + policies) with
//    `parley train` into a temp dir and reports the wall time (target < 3 s);
// 2. starts `parley run --enable-api --model <tmp>` and the bare Nest app, each in its own process;
// 3. autocannon with 10 and 50 connections, each connection one conversation at a time
//    (sequential turns; a conversation is the six moodbot messages below, then a new sender):
//    (a) bare GET /ping, (b) POST /webhooks/rest/webhook,
//    (c) with DATABASE_URL: the bare route plus one single-row INSERT (GET /insert), for context.
//    Targets: (b) ≥ 40 % of (a) at 50 conversations, (b) p99 < 15 ms at 10 conversations.
// 4. with `--flows 1`: (d) the same six messages to the mood bot written as flows (Rasa Pro
//    CALM: NLUCommandAdapter + FlowPolicy, bench/fixtures/moodbot-flows), right after (b) in the
//    same run. Target: (d) within 20 % of (b) at 50 conversations.
// 5. with `--lock redis`: (e) the same REST turns at 50 conversations on a second `parley run`
//    whose endpoints.yml says `lock_store: type: concurrent_redis` (REDIS_URL, default
//    127.0.0.1:6379), right after (b) in the same run. Target (scale-out G.18): (e) ≥ 0.8× (b).
// 6. with `--rounds N` (and --flows 1 or --lock redis): N more runs of (b) against (d) / (e) at
//    50 conversations, alternating which goes first; the verdict then takes the ratio of their
//    summed turns/s, which a drift of the machine between two runs moves less.
// Database: DATABASE_URL's server (a fresh scratch database, dropped afterwards) or the embedded
// PostgreSQL. Each measured run reports the server's CPU per request and, when PostgreSQL runs
// on this machine, the CPU its processes spent per request (for (d) and (e) beside (b)'s): on a
// 2-core machine the database's share of the turn moves the ratios as much as the server's.
// Results: console and bench/results/dialogue.json.
const { chmodSync, existsSync, mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
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
  ROOT,
  moodbotFiles,
  parseNumberArgs,
  redisLockEndpoints,
  startParley,
  takeLockOption,
  trainParley,
  writeResults,
} = require('./lib/parley');

const DIST_CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const RESULTS = path.join(__dirname, 'results', 'dialogue.json');
const MESSAGES = ['hello there', 'I am very sad', 'yes it did', 'hi', 'wonderful', 'bye'];

async function turns(parley, connections, bench, run, label = '(b) REST webhook turns') {
  let bad = 0;
  let conversations = 0;
  const result = await cannon(
    `${label}, ${connections} conversations`,
    {
      connections,
      url: parley.url,
      // One request per message of the script: autocannon gives each connection a fresh
      // `context` whenever it starts the list again, so each connection runs one scripted
      // conversation after another, a new sender each time, on the same keep-alive socket.
      requests: MESSAGES.map((message, turn) => ({
        method: 'POST',
        path: '/webhooks/rest/webhook',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req, context) => {
          if (turn === 0) {
            context.sender = `bench-${run}-${Math.random().toString(36).slice(2, 10)}`;
            conversations++;
          }
          req.body = JSON.stringify({ sender: context.sender, message });
          return req;
        },
        onResponse: (status, body) => {
          if (status !== 200 || !body.startsWith('[{')) bad++;
        },
      })),
    },
    bench,
    parley.pid,
  );
  result.responsesWithoutBotMessage = bad;
  result.conversations = conversations;
  return result;
}

/**
 * The server's CPU per request of `base` (the run `run` is compared with, named `label`), then
 * the local PostgreSQL's CPU per request of both, when it was measured.
 */
function dbCpu(run, base, label) {
  if (run.dbCpuUsPerReq === undefined || base.dbCpuUsPerReq === undefined) return '';
  return ` (${label} ${base.cpuUsPerReq}); PostgreSQL CPU ${run.dbCpuUsPerReq} µs per request (${label} ${base.dbCpuUsPerReq})`;
}

async function main() {
  const { lock, rest } = takeLockOption(process.argv.slice(2), ['redis']);
  const bench = parseNumberArgs(rest, { duration: 10, warmup: 2, flows: 0, rounds: 0 });
  if (!existsSync(DIST_CLI)) throw new Error(`${DIST_CLI} is missing: run "npm run build" first`);
  const cleanups = cleanupStack();
  try {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-dialogue-'));
    chmodSync(tmp, 0o755);
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    const model = await trainParley({ ...moodbotFiles(), out: path.join(tmp, 'models') });
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
    // With an external database the bare app also serves GET /insert (the route plus one
    // single-row INSERT), the reference the issue gives for one write per request.
    const bare = await forkServer(path.join(__dirname, 'lib', 'bare-server.js'), [], 'bare', {
      ...(env.DATABASE_URL ? { BARE_INSERT_DATABASE_URL: env.DATABASE_URL } : {}),
    });
    cleanups.push(() => bare.close());
    const parley = await startParley(model.dir, env);
    cleanups.push(() => parley.close());
    const sample = await request('POST', `${parley.url}/webhooks/rest/webhook`, {
      sender: 'bench-sample',
      message: 'hello there',
    });
    check(
      Array.isArray(sample.json) && sample.json[0]?.text === 'Hi there! How is your day going?',
      'the moodbot greets',
    );

    let redisParley = null;
    if (lock === 'redis') {
      const endpoints = redisLockEndpoints(tmp);
      redisParley = await startParley(model.dir, {
        ...env,
        PARLEY_ENDPOINTS: endpoints.file,
        BENCH_REDIS_PASSWORD: endpoints.password,
      });
      cleanups.push(() => redisParley.close());
      const greeting = await request('POST', `${redisParley.url}/webhooks/rest/webhook`, {
        sender: 'bench-sample-redis',
        message: 'hello there',
      });
      check(
        Array.isArray(greeting.json) &&
          greeting.json[0]?.text === 'Hi there! How is your day going?',
        'the moodbot greets with the Redis lock store',
      );
    }

    let flowsParley = null;
    if (bench.flows) {
      const flowsModel = await trainParley({
        data: [path.join(__dirname, 'fixtures', 'moodbot-flows', 'data')],
        domain: path.join(__dirname, 'fixtures', 'moodbot-flows', 'domain.yml'),
        config: path.join(__dirname, 'fixtures', 'moodbot-flows', 'config.yml'),
        out: path.join(tmp, 'models-flows'),
      });
      console.log(`flows mood bot trained in ${(flowsModel.ms / 1000).toFixed(2)} s`);
      flowsParley = await startParley(flowsModel.dir, env);
      cleanups.push(() => flowsParley.close());
      const greeting = await request('POST', `${flowsParley.url}/webhooks/rest/webhook`, {
        sender: 'bench-sample-flows',
        message: 'hello there',
      });
      check(
        Array.isArray(greeting.json) &&
          greeting.json[0]?.text === 'Hi there! How is your day going?',
        'the flows mood bot greets',
      );
    }

    const loadBefore = loadAverage({ warn: true });
    const results = {};
    for (const connections of [10, 50]) {
      const a = await cannon(
        `(a) bare Nest GET /ping, ${connections} connections`,
        { connections, url: `${bare.url}/ping` },
        bench,
        bare.pid,
      );
      const b = await turns(parley, connections, bench, connections);
      b.ratioToBare = round(b.reqPerSec / a.reqPerSec, 3);
      const c = env.DATABASE_URL
        ? await cannon(
            `(c) bare Nest GET /insert (one INSERT per request), ${connections} connections`,
            { connections, url: `${bare.url}/insert` },
            bench,
            bare.pid,
          )
        : null;
      if (c) c.ratioToBare = round(c.reqPerSec / a.reqPerSec, 3);
      for (const r of [a, b, c].filter(Boolean)) {
        check(r.non2xx === 0 && r.errors === 0, `${r.name}: all responses 200`);
      }
      const d = flowsParley
        ? await turns(flowsParley, connections, bench, `flows${connections}`)
        : null;
      if (d) {
        d.ratioToBare = round(d.reqPerSec / a.reqPerSec, 3);
        d.ratioToStories = round(d.reqPerSec / b.reqPerSec, 3);
        check(d.non2xx === 0 && d.errors === 0, `${d.name}: all responses 200`);
        console.log(
          `${connections} conversations, flows: ${d.reqPerSec} turns/s (p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms) = ${(d.ratioToStories * 100).toFixed(1)} % of the stories turns; server CPU ${d.cpuUsPerReq} µs per request${dbCpu(d, b, 'stories')}`,
        );
      }
      // (e) runs at 10 conversations too, so that its server is as warm at 50 as (b)'s.
      const e = redisParley
        ? await turns(
            redisParley,
            connections,
            bench,
            `redis${connections}`,
            '(e) REST webhook turns, Redis lock store',
          )
        : null;
      if (e) {
        e.ratioToBare = round(e.reqPerSec / a.reqPerSec, 3);
        e.ratioToDefaultLock = round(e.reqPerSec / b.reqPerSec, 3);
        check(e.non2xx === 0 && e.errors === 0, `${e.name}: all responses 200`);
        console.log(
          `${connections} conversations, Redis lock: ${e.reqPerSec} turns/s (p50 ${e.p50Ms} ms, p99 ${e.p99Ms} ms) = ${(e.ratioToDefaultLock * 100).toFixed(1)} % of the default lock store's turns; server CPU ${e.cpuUsPerReq} µs per request${dbCpu(e, b, 'default lock store')}`,
        );
      }
      results[connections] = {
        a,
        b,
        ...(c ? { c } : {}),
        ...(d ? { d } : {}),
        ...(e ? { e } : {}),
      };
      console.log(
        `${connections} conversations: bare ${a.reqPerSec} req/s (p99 ${a.p99Ms} ms); webhook ${b.reqPerSec} turns/s (p50 ${b.p50Ms} ms, p99 ${b.p99Ms} ms) = ${(b.ratioToBare * 100).toFixed(1)} % of bare; server CPU ${a.cpuUsPerReq} / ${b.cpuUsPerReq} µs per request` +
          (c
            ? `; bare + one INSERT ${c.reqPerSec} req/s = ${(c.ratioToBare * 100).toFixed(1)} % of bare (server CPU ${c.cpuUsPerReq} µs)`
            : ''),
      );
    }
    // (f) --rounds N: N more runs of (b) against (d) and (e) at 50 conversations, alternating
    // which goes first; the ratio of the summed turns/s (and each round's) is the figure the
    // verdict uses, so a drift of the machine between two back-to-back runs weighs less.
    const alternating = {};
    for (const [key, server, label] of [
      ['d', flowsParley, 'flows'],
      ['e', redisParley, 'Redis lock'],
    ]) {
      if (!server || bench.rounds === 0) continue;
      const pairs = [];
      for (let r = 1; r <= bench.rounds; r++) {
        const run = {};
        const order = r % 2 === 1 ? ['b', key] : [key, 'b'];
        for (const which of order) {
          run[which] =
            which === 'b'
              ? await turns(parley, 50, bench, `round${r}-${key}`)
              : await turns(server, 50, bench, `round${r}-${key}x`, `(${key}) ${label} turns`);
          check(run[which].non2xx === 0 && run[which].errors === 0, `round ${r}: all 200`);
        }
        pairs.push({
          round: r,
          stories: run.b.reqPerSec,
          other: run[key].reqPerSec,
          ratio: round(run[key].reqPerSec / run.b.reqPerSec, 3),
          cpuUsPerReq: { stories: run.b.cpuUsPerReq, other: run[key].cpuUsPerReq },
        });
      }
      const sum = (k) => pairs.reduce((t, p) => t + p[k], 0);
      alternating[key] = { pairs, pooledRatio: round(sum('other') / sum('stories'), 3) };
      console.log(
        `50 conversations, ${label} against the default turns in ${pairs.length} alternating rounds: ` +
          `${pairs.map((p) => `${(p.ratio * 100).toFixed(1)} %`).join(', ')}; ` +
          `summed ${(alternating[key].pooledRatio * 100).toFixed(1)} %`,
      );
    }
    const flowsRatio = alternating.d?.pooledRatio ?? results[50].d?.ratioToStories;
    const redisRatio = alternating.e?.pooledRatio ?? results[50].e?.ratioToDefaultLock;
    const loadAfter = loadAverage();
    const verdict = {
      ratioAt50: results[50].b.ratioToBare,
      ratioAt50Pass: results[50].b.ratioToBare >= 0.4,
      p99At10Ms: results[10].b.p99Ms,
      p99At10Pass: results[10].b.p99Ms < 15,
      trainMs: model.ms,
      trainPass: model.ms < 3000,
      ...(redisParley
        ? {
            redisLockToDefaultAt50: redisRatio,
            redisLockAt50Pass: redisRatio >= 0.8,
          }
        : {}),
      ...(flowsParley
        ? {
            flowsToStoriesAt50: flowsRatio,
            flowsAt50Pass: flowsRatio >= 0.8,
          }
        : {}),
    };
    console.log(
      `verdict: ratio@50 ${verdict.ratioAt50Pass ? 'PASS' : 'FAIL'}, p99@10 ${verdict.p99At10Pass ? 'PASS' : 'FAIL'}, train ${verdict.trainPass ? 'PASS' : 'FAIL'}` +
        (flowsParley ? `, flows within 20 % @50 ${verdict.flowsAt50Pass ? 'PASS' : 'FAIL'}` : '') +
        (redisParley
          ? `, Redis lock ≥ 0.8× @50 ${verdict.redisLockAt50Pass ? 'PASS' : 'FAIL'}`
          : ''),
    );
    console.log(
      `load average (1/5/15 min): before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')} on ${os.cpus().length} CPUs`,
    );
    writeResults(RESULTS, {
      date: new Date().toISOString(),
      ...machine(),
      database,
      options: { ...bench, lock: lock ?? 'default' },
      results,
      ...(Object.keys(alternating).length > 0 ? { alternating } : {}),
      verdict,
    });
  } finally {
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
