'use strict';
// Instances benchmark: REST channel turns on one Parley instance vs two instances on the same
// database behind a round-robin proxy, plus a bare NestJS route, all in the same run.
//
//   npm run build && [DATABASE_URL=…] node bench/instances.js [--duration 10] [--warmup 2]
//                                      [--connections 50] [--warm 30] [--rounds 0]
//                                      [--lock postgres|redis]
//
// 1. trains the mood bot (test/fixtures/moodbot, config.full.yml) once;
// 2. starts two `parley run --enable-api --model <tmp>` on one database (LOCK_STORE=postgres, as
//    replicas run; with `--lock redis` their endpoints.yml says `lock_store: concurrent_redis`,
//    REDIS_URL or 127.0.0.1:6379, the deployment of the README's "Running at scale"), the bare
//    Nest app, and two round-robin proxies (bench/lib/round-robin-proxy.js,
//    each its own process): P1 over instance A, P2 over instances A and B;
// 3. autocannon at --connections (default 50), each connection one scripted moodbot conversation
//    after another (as bench/dialogue.js):
//    (a) bare GET /ping; (b) instance A directly, (b2) instance B directly (as warm as A: about
//    A's turns/s); (c) A through P1; (d) A + B through P2.
//    Targets: (d) ≥ 0.9 × (c) — same proxy hop, one instance more (on 2 cores nothing can scale
//    up; the check is that a second replica costs no collapse) — and (d) p99 ≤ 50 ms.
//    (d)/(b) is reported too: the cost of the proxy hop itself (a load balancer on the same cores).
//    Before any of it, each instance serves the same conversations directly for --warm seconds
//    (unmeasured): V8 optimises a server's hot code over its first thousands of turns, and a
//    replica measured colder than the instance it is compared with costs half again the CPU per
//    turn (before this warm-up, B — which served nothing before (d) — took 1.5x A's CPU per turn
//    in (d), and (d)/(c) read 0.54–0.57 where equally warm instances gave 0.82–0.97).
// 4. with `--rounds N`: N more runs of (c) and (d), alternating which goes first; the verdict
//    then takes the ratio of the summed turns/s of all runs (this machine's speed drifts by
//    ±30 % within minutes, more than a single pair of runs can tell apart).
// Database: DATABASE_URL's server (a fresh scratch database, dropped afterwards) or a throwaway
// embedded PostgreSQL. Results: console and bench/results/instances.json.
const { chmodSync, existsSync, mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  cannon,
  check,
  cleanupStack,
  forkServer,
  loadAverage,
  machine,
  request,
  round,
  startDatabase,
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
const RESULTS = path.join(__dirname, 'results', 'instances.json');
const PROXY = path.join(__dirname, 'lib', 'round-robin-proxy.js');
const MESSAGES = ['hello there', 'I am very sad', 'yes it did', 'hi', 'wonderful', 'bye'];

/** Scripted moodbot conversations on `url`, one after another per connection. */
async function turns(name, url, connections, bench, pid) {
  let bad = 0;
  const result = await cannon(
    name,
    {
      connections,
      url,
      requests: MESSAGES.map((message, turn) => ({
        method: 'POST',
        path: '/webhooks/rest/webhook',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req, context) => {
          if (turn === 0) context.sender = `bench-${Math.random().toString(36).slice(2, 12)}`;
          req.body = JSON.stringify({ sender: context.sender, message });
          return req;
        },
        onResponse: (status, body) => {
          if (status !== 200 || !body.startsWith('[{')) bad++;
        },
      })),
    },
    bench,
    pid,
  );
  result.responsesWithoutBotMessage = bad;
  return result;
}

async function main() {
  const { lock, rest } = takeLockOption(process.argv.slice(2), ['postgres', 'redis']);
  const bench = parseNumberArgs(rest, {
    duration: 10,
    warmup: 2,
    connections: 50,
    warm: 30,
    rounds: 0,
  });
  if (!existsSync(DIST_CLI)) throw new Error(`${DIST_CLI} is missing: run "npm run build" first`);
  const cleanups = cleanupStack();
  try {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-instances-'));
    chmodSync(tmp, 0o755);
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    const model = await trainParley({ ...moodbotFiles(), out: path.join(tmp, 'models') });

    const db = await startDatabase();
    cleanups.push(() => db.stop());
    const env = { DATABASE_URL: db.url, LOCK_STORE: 'postgres', DATABASE_POOL_SIZE: '20' };
    if (lock === 'redis') {
      // Both instances read the same endpoints.yml: one key prefix, shared locks.
      const endpoints = redisLockEndpoints(tmp);
      env.PARLEY_ENDPOINTS = endpoints.file;
      env.BENCH_REDIS_PASSWORD = endpoints.password;
    }
    const bare = await forkServer(path.join(__dirname, 'lib', 'bare-server.js'), [], 'bare');
    cleanups.push(() => bare.close());
    // One at a time: both migrate the same database at start.
    const a = await startParley(model.dir, env);
    cleanups.push(() => a.close());
    const b = await startParley(model.dir, env);
    cleanups.push(() => b.close());
    const p1 = await forkServer(PROXY, [a.url], 'proxy over A');
    cleanups.push(() => p1.close());
    const p2 = await forkServer(PROXY, [a.url, b.url], 'proxy over A and B');
    cleanups.push(() => p2.close());
    for (const url of [a.url, b.url, p2.url, p2.url]) {
      const sample = await request('POST', `${url}/webhooks/rest/webhook`, {
        sender: `bench-sample-${Math.random()}`,
        message: 'hello there',
      });
      check(sample.json[0]?.text === 'Hi there! How is your day going?', `${url} greets`);
    }

    const n = bench.connections;
    const unmeasured = { ...bench, duration: bench.warm, warmup: 0 };
    if (bench.warm > 0) {
      console.log(`warming each instance up: ${bench.warm} s of turns, directly`);
      for (const instance of [a, b]) await turns('warm-up', instance.url, n, unmeasured);
    }
    const loadBefore = loadAverage({ warn: true });
    const ra = await cannon(
      `(a) bare Nest GET /ping, ${n} connections`,
      { connections: n, url: `${bare.url}/ping` },
      bench,
      bare.pid,
    );
    const rb = await turns(`(b) one instance, direct, ${n} conversations`, a.url, n, bench, a.pid);
    // B as much traffic as A, and a check that both are as warm (B's turns/s ≈ A's).
    const rb2 = await turns(`(b2) the other instance, direct`, b.url, n, bench, b.pid);
    const rc = await turns(`(c) one instance behind the proxy`, p1.url, n, bench, a.pid);
    const both = [a.pid, b.pid];
    const rd = await turns(`(d) two instances behind the proxy`, p2.url, n, bench, both);
    const rounds = [];
    for (let i = 0; i < bench.rounds; i++) {
      const runs = {
        c: () => turns(`(c) round ${i + 1}`, p1.url, n, bench, a.pid),
        d: () => turns(`(d) round ${i + 1}`, p2.url, n, bench, both),
      };
      const result = {};
      for (const key of i % 2 === 0 ? ['d', 'c'] : ['c', 'd']) result[key] = await runs[key]();
      const { c, d } = result;
      rounds.push({ c, d });
      console.log(
        `round ${i + 1}: one instance ${c.reqPerSec}, two ${d.reqPerSec} turns/s (${round(d.reqPerSec / c.reqPerSec, 3)})`,
      );
    }
    const loadAfter = loadAverage();
    for (const r of [ra, rb, rb2, rc, rd, ...rounds.flatMap(({ c, d }) => [c, d])]) {
      check(r.non2xx === 0 && r.errors === 0, `${r.name}: all responses 200`);
      if (r !== ra) check(r.responsesWithoutBotMessage === 0, `${r.name}: every turn answered`);
      r.ratioToBare = round(r.reqPerSec / ra.reqPerSec, 3);
      const cpu =
        r.cpuUsPerReq === undefined
          ? ''
          : `; CPU per request: server${r === rd || rounds.some((x) => x.d === r) ? 's' : ''} ${r.cpuUsPerReq} µs` +
            (r.dbCpuUsPerReq === undefined ? '' : `, PostgreSQL ${r.dbCpuUsPerReq} µs`);
      console.log(
        `${r.name}: ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms (${(r.ratioToBare * 100).toFixed(1)} % of bare)${cpu}`,
      );
    }
    const pairs = [{ c: rc, d: rd }, ...rounds];
    const sum = (key) => pairs.reduce((total, pair) => total + pair[key].reqPerSec, 0);
    const verdict = {
      twoToOneBehindProxy: round(rd.reqPerSec / rc.reqPerSec, 3),
      twoToOneDirect: round(rd.reqPerSec / rb.reqPerSec, 3),
      p99TwoMs: rd.p99Ms,
      // Little's law: n conversations always in flight at X turns/s wait n / X s a turn on
      // average; a p99 under that mean is impossible.
      meanLatencyOneDirectMs: round((n / rb.reqPerSec) * 1000, 1),
    };
    if (rounds.length > 0) {
      verdict.twoToOneSummed = round(sum('d') / sum('c'), 3);
      verdict.pairRatios = pairs.map(({ c, d }) => round(d.reqPerSec / c.reqPerSec, 3));
    }
    // CPU per turn over all pairs (weighted by turns): what a second replica costs in work,
    // which moves far less with the machine's speed than turns/s.
    const perTurn = (key, field) => {
      const turnsOf = pairs.reduce((t, pair) => t + pair[key].requests, 0);
      const us = pairs.reduce((t, pair) => t + (pair[key][field] ?? NaN) * pair[key].requests, 0);
      return round(us / turnsOf, 1);
    };
    verdict.cpuUsPerTurn = {
      one: { server: perTurn('c', 'cpuUsPerReq'), postgres: perTurn('c', 'dbCpuUsPerReq') },
      two: { servers: perTurn('d', 'cpuUsPerReq'), postgres: perTurn('d', 'dbCpuUsPerReq') },
    };
    const ratio = verdict.twoToOneSummed ?? verdict.twoToOneBehindProxy;
    verdict.ratioPass = ratio >= 0.9;
    verdict.p99Pass = verdict.p99TwoMs <= 50;
    console.log(
      `two instances / one (both behind the proxy): ${verdict.twoToOneBehindProxy}` +
        (rounds.length > 0
          ? `; over ${pairs.length} pairs of runs ${verdict.pairRatios.join(', ')}, summed ${verdict.twoToOneSummed}`
          : '') +
        ` (${verdict.ratioPass ? 'PASS' : 'FAIL'} ≥ 0.9); / one direct: ${verdict.twoToOneDirect}; ` +
        `p99 two instances ${verdict.p99TwoMs} ms (${verdict.p99Pass ? 'PASS' : 'FAIL'} ≤ 50 ms; ` +
        `one instance directly averages ${verdict.meanLatencyOneDirectMs} ms a turn at ${n} conversations in flight)`,
    );
    const { one, two } = verdict.cpuUsPerTurn;
    console.log(
      `CPU per turn over the ${pairs.length} pairs: one instance ${one.server} µs + PostgreSQL ${one.postgres} µs; ` +
        `two instances ${two.servers} µs + PostgreSQL ${two.postgres} µs`,
    );
    console.log(
      `load average (1/5/15 min): before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')} on ${os.cpus().length} CPUs`,
    );
    writeResults(RESULTS, {
      date: new Date().toISOString(),
      ...machine(),
      database: db.kind,
      options: { ...bench, lock: lock ?? 'postgres' },
      results: { a: ra, b: rb, b2: rb2, c: rc, d: rd, rounds },
      verdict,
      load: { before: loadBefore, after: loadAfter },
    });
  } finally {
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
