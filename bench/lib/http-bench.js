'use strict';
/* global fetch, AbortSignal -- Node globals missing from the repo's eslint JS globals */
// Helpers shared by the HTTP benchmarks (bench/tracker.js, bench/nlu-http.js): the bare Nest
// reference app, child-process servers reporting their port over IPC, autocannon runs, fetch
// with timing, and an ordered cleanup list.
const { fork } = require('node:child_process');
const { existsSync, mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Buffer } = require('node:buffer');
const { clearTimeout, setTimeout } = require('node:timers');
const { URL } = require('node:url');

const DIST = path.resolve(__dirname, '..', '..', 'dist');
const REQUEST_TIMEOUT_MS = 30_000;
const SERVER_START_TIMEOUT_MS = 180_000;

function round(value, digits = 2) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function check(condition, message) {
  if (!condition) throw new Error(`sanity check failed: ${message}`);
}

/**
 * A fresh `parley_bench_<ts>` database on the PostgreSQL server of `serverUrl`, dropped by stop():
 * benchmarks never write into (or migrate) the database DATABASE_URL names.
 */
async function createScratchDatabase(serverUrl) {
  const { Client } = require('pg');
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

/** A module of the build (dist/<file>), or a clear error when it has not been built. */
function need(file) {
  const full = path.join(DIST, file);
  if (!existsSync(full)) throw new Error(`${full} is missing: run "npm run build" first`);
  return require(full);
}

/** DATABASE_URL's server with a fresh database, or a throwaway embedded PostgreSQL. */
async function startDatabase() {
  if (process.env.DATABASE_URL) return createScratchDatabase(process.env.DATABASE_URL);
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

/** A minimal Nest app: one controller with GET /ping, default Express adapter, no middleware. */
async function serveBare() {
  require('reflect-metadata');
  const { Body, Controller, Get, HttpCode, Module, Post } = require('@nestjs/common');
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
  // POST /echo: the same route for a request with a JSON body (Nest's default body parser),
  // answering the text it was sent — the floor for routes that read a body.
  PingController.prototype.echo = function echo(body) {
    return { ok: true, text: body?.text ?? null };
  };
  Body()(PingController.prototype, 'echo', 0);
  for (const decorate of [Post('echo'), HttpCode(200)]) {
    decorate(
      PingController.prototype,
      'echo',
      Object.getOwnPropertyDescriptor(PingController.prototype, 'echo'),
    );
  }
  // BARE_INSERT_DATABASE_URL adds GET /insert: the same route plus one single-row INSERT (its
  // own autocommitted transaction) — the floor the dialogue bench's turns are compared with.
  const insertUrl = process.env.BARE_INSERT_DATABASE_URL;
  let pool = null;
  if (insertUrl) {
    const { Pool } = require('pg');
    pool = new Pool({ connectionString: insertUrl, max: 20 });
    await pool.query(
      'CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), payload text NOT NULL)',
    );
    PingController.prototype.insert = async function insert() {
      await pool.query('INSERT INTO bench_insert (payload) VALUES ($1)', ['ping']);
      return { ok: true };
    };
    Get('insert')(
      PingController.prototype,
      'insert',
      Object.getOwnPropertyDescriptor(PingController.prototype, 'insert'),
    );
  }
  Controller()(PingController);
  class PingModule {}
  Module({ controllers: [PingController] })(PingModule);
  const app = await NestFactory.create(PingModule, { logger: false });
  if (pool) {
    const close = app.close.bind(app);
    app.close = async () => {
      await close();
      await pool.end();
    };
  }
  await app.listen(0, '127.0.0.1');
  return app;
}

/** In a forked child: report the app's port over IPC, close the app on a 'close' message. */
function serveOverIpc(app) {
  process.on('message', (message) => {
    if (message === 'close') {
      app.close().finally(() => process.exit(0));
    }
  });
  process.send({ port: app.getHttpServer().address().port });
}

/** Forks `script args`, which must call serveOverIpc; resolves to { kind, url, close }. */
function forkServer(script, args, kind, env) {
  return new Promise((resolve, reject) => {
    const child = fork(script, args, {
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
        pid: child.pid,
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

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux); null elsewhere.
 * Less sensitive than req/s to other processes competing for the CPUs.
 */
function processCpuMs(pid) {
  try {
    const stat = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) of each PostgreSQL process on this machine (`comm` is `postgres`), by pid: what
 * a local database server spends, whichever backend serves the requests.
 */
function postgresCpuMs() {
  const fs = require('node:fs');
  const byPid = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue; // the process ended meanwhile
    }
    const ms = processCpuMs(entry);
    if (ms !== null) byPid.set(entry, ms);
  }
  return byPid;
}

/** CPU ms the PostgreSQL processes spent between two readings (processes that ended: not). */
function postgresCpuSince(before) {
  if (before.size === 0) return null;
  let total = 0;
  for (const [pid, ms] of postgresCpuMs()) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** CPU ms of the processes `pids` together so far; null when one cannot be read. */
function processesCpuMs(pids) {
  let total = 0;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms === null) return null;
    total += ms;
  }
  return total;
}

/**
 * Optional warm-up run of bench.warmup s, then a measured run of bench.duration s. With `pid`
 * (the server's process, or the processes of several servers together), also the servers' CPU
 * time per answered request (`cpuUsPerReq`) and, when PostgreSQL runs on this machine, its CPU
 * time per request (`dbCpuUsPerReq`; every postgres process, so other databases' work on the
 * machine counts too; a backend that ends during the run is not counted).
 */
async function cannon(name, opts, bench, pid) {
  if (bench.warmup > 0) await autocannonRun({ ...opts, duration: bench.warmup });
  const pids = pid === undefined ? null : [pid].flat();
  const cpu0 = pids === null ? null : processesCpuMs(pids);
  const db0 = pids === null ? null : postgresCpuMs();
  const result = await autocannonRun({ ...opts, duration: bench.duration });
  const cpu1 = pids === null ? null : processesCpuMs(pids);
  const dbMs = db0 === null ? null : postgresCpuSince(db0);
  const summary = summarizeCannon(name, result);
  if (cpu0 !== null && cpu1 !== null && summary.requests > 0) {
    summary.cpuUsPerReq = round(((cpu1 - cpu0) * 1000) / summary.requests, 1);
  }
  if (dbMs !== null && summary.requests > 0) {
    summary.dbCpuUsPerReq = round((dbMs * 1000) / summary.requests, 1);
  }
  return summary;
}

/** Rounded [1m, 5m, 15m] load average; warns when the 1-minute figure exceeds half the CPUs. */
function loadAverage({ warn = false } = {}) {
  const load = os.loadavg().map((l) => round(l));
  if (warn && load[0] > os.cpus().length * 0.5) {
    console.warn(
      `warning: load average ${load[0]} on ${os.cpus().length} CPUs — figures will be noisy`,
    );
  }
  return load;
}

function machine() {
  return {
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
  };
}

/** Cleanup steps run last-in first-out, once, on completion or on SIGINT/SIGTERM. */
function cleanupStack() {
  const steps = [];
  const run = async () => {
    while (steps.length > 0) {
      const step = steps.pop();
      await step().catch((error) => console.error('cleanup failed:', error.message));
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => void run().finally(() => process.exit(130)));
  }
  return { push: (step) => steps.push(step), run };
}

module.exports = {
  REQUEST_TIMEOUT_MS,
  SERVER_START_TIMEOUT_MS,
  autocannonRun,
  cannon,
  check,
  cleanupStack,
  createScratchDatabase,
  forkServer,
  loadAverage,
  machine,
  need,
  postgresCpuMs,
  processCpuMs,
  request,
  round,
  serveBare,
  serveOverIpc,
  startDatabase,
  stopChild,
  summarizeCannon,
};
