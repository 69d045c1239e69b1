'use strict';
// Request-log cost: POST /model/parse at 8 in flight against three servers of the same model,
// in the same run, round-robin:
//   default — LOG_LEVEL=info, LOG_REQUESTS unset (request lines at debug: not written)
//   off     — LOG_LEVEL=silent (no log at all)
//   info    — LOG_LEVEL=info, LOG_REQUESTS=true (one line per request)
// Target: default ≥ 90 % of off by req/s (median over the rounds). Each server writes its log to
// a file in the temp dir; the bytes per request are reported.
//
//   npm run build && node bench/request-log.js [--duration 8] [--warmup 2] [--connections 8]
//                                              [--rounds 3]
// Database: DATABASE_URL's server (a scratch database), or a throwaway embedded PostgreSQL.
// Results: console table and bench/results/request-log.json.
const { closeSync, mkdtempSync, openSync, rmSync, statSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { clearTimeout, setTimeout } = require('node:timers');
const {
  cannon,
  check,
  cleanupStack,
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
  startParley,
  trainParley,
  writeResults,
} = require('./lib/parley');

const RESULTS = path.join(__dirname, 'results', 'request-log.json');
const TARGET_RATIO = 0.9;
const TEXTS = ['hello there', 'I am sad', 'great, thanks', 'no', 'are you a bot?', 'bye'];

const VARIANTS = [
  { name: 'default', env: { LOG_LEVEL: 'info' } },
  { name: 'off', env: { LOG_LEVEL: 'silent' } },
  { name: 'info', env: { LOG_LEVEL: 'info', LOG_REQUESTS: 'true' } },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
  const bench = parseNumberArgs(process.argv.slice(2), {
    duration: 8,
    warmup: 2,
    connections: 8,
    rounds: 3,
  });
  const cleanups = cleanupStack();
  const watchdog = setTimeout(() => {
    console.error('bench/request-log.js: still running after 15 min, aborting');
    void cleanups.run().finally(() => process.exit(2));
  }, 15 * 60_000);
  watchdog.unref();
  try {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-bench-log-'));
    cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
    console.log('training the moodbot…');
    const model = await trainParley({ ...moodbotFiles(), out: path.join(tmp, 'models') });
    const db = await startDatabase();
    cleanups.push(() => db.stop());
    const servers = [];
    for (const variant of VARIANTS) {
      const logFile = path.join(tmp, `${variant.name}.log`);
      const fd = openSync(logFile, 'a');
      const server = await startParley(
        model.dir,
        { ...variant.env, DATABASE_URL: db.url, LOG_REQUESTS: variant.env.LOG_REQUESTS },
        { output: fd },
      );
      closeSync(fd);
      cleanups.push(() => server.close());
      const { json } = await request('POST', `${server.url}/model/parse`, { text: 'hello' });
      check(typeof json.intent?.name === 'string', `${variant.name}: parse answers an intent`);
      servers.push({ ...variant, server, logFile, runs: [] });
    }
    const bodies = TEXTS.map((text) => JSON.stringify({ text }));
    const loadBefore = loadAverage({ warn: true });
    for (let r = 0; r < bench.rounds; r++) {
      for (const s of servers) {
        const bytes0 = statSync(s.logFile).size;
        let next = 0;
        const result = await cannon(
          `${s.name} #${r + 1}`,
          {
            connections: bench.connections,
            url: s.server.url,
            requests: [
              {
                method: 'POST',
                path: '/model/parse',
                headers: { 'content-type': 'application/json' },
                setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }),
              },
            ],
          },
          bench,
          s.server.pid,
        );
        check(result.non2xx === 0 && result.errors === 0, `${result.name}: all responses 200`);
        result.logBytesPerRequest = round((statSync(s.logFile).size - bytes0) / result.requests, 1);
        s.runs.push(result);
        console.log(
          `${result.name}: ${result.reqPerSec} req/s, p99 ${result.p99Ms} ms, ${result.logBytesPerRequest} log bytes/request`,
        );
      }
    }
    const loadAfter = loadAverage();
    const summary = servers.map((s) => ({
      variant: s.name,
      env: s.env,
      medianReqPerSec: round(median(s.runs.map((x) => x.reqPerSec))),
      medianCpuUsPerReq: round(median(s.runs.map((x) => x.cpuUsPerReq ?? NaN)), 1),
      logBytesPerRequest: round(median(s.runs.map((x) => x.logBytesPerRequest)), 1),
    }));
    const off = summary.find((s) => s.variant === 'off').medianReqPerSec;
    for (const s of summary) s.ratioToOff = round(s.medianReqPerSec / off, 3);
    console.table(summary.map(({ env: _env, ...rest }) => rest));
    const ratio = summary.find((s) => s.variant === 'default').ratioToOff;
    const pass = ratio >= TARGET_RATIO;
    console.log(
      `default / off: ${(ratio * 100).toFixed(1)} % (target ≥ ${TARGET_RATIO * 100} %) → ${pass ? 'PASS' : 'FAIL'}`,
    );
    console.log(`load average: before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}`);
    writeResults(RESULTS, {
      date: new Date().toISOString(),
      ...machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      database: db.kind,
      options: bench,
      summary,
      runs: servers.map((s) => ({ variant: s.name, runs: s.runs })),
      verdict: { defaultVsOff: ratio, target: TARGET_RATIO, pass },
    });
    console.log(`written ${path.relative(ROOT, RESULTS)}`);
  } finally {
    clearTimeout(watchdog);
    await cleanups.run();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
