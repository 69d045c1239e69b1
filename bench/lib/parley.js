'use strict';
/* global fetch, AbortSignal -- Node globals missing from the repo's eslint JS globals */
// Helpers shared by the benchmarks that drive the `parley` CLI: numeric option parsing, a free
// loopback port, `parley train` in a child process, `parley run` in its own process group, and
// the results file.
const { execFile, spawn } = require('node:child_process');
const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const { URL } = require('node:url');
const path = require('node:path');
const { clearTimeout, setTimeout } = require('node:timers');
const { SERVER_START_TIMEOUT_MS } = require('./http-bench');

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'parley.js');
const MOODBOT = path.join(ROOT, 'test', 'fixtures', 'moodbot');
const STOP_TIMEOUT_MS = 20_000;

/**
 * `--key value` pairs over `defaults` (every value a non-negative number); an unknown key or a
 * value that is not a number throws, naming the known keys.
 */
function parseNumberArgs(argv, defaults) {
  const opts = { ...defaults };
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

/**
 * `parley train --data <data...> --domain <domain> --config <config> --out <out> <args...>`;
 * resolves to { dir: out, archive (the path it printed last), ms (wall time) }.
 */
function trainParley({ data, domain, config, out, args = [], env, timeout = 300_000 }) {
  const argv = [BIN, 'train', '--data', ...data, '--domain', domain, '--config', config];
  argv.push('--out', out, ...args);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      argv,
      { cwd: ROOT, env: { ...process.env, ...env }, timeout, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`parley train failed (${error.message}):\n${stderr}`));
          return;
        }
        const archive = stdout.trim().split('\n').pop();
        resolve({ dir: out, archive, ms: Date.now() - started });
      },
    );
  });
}

/** The test mood bot's files (test/fixtures/moodbot) with config file `config`. */
function moodbotFiles(config = 'config.full.yml') {
  return {
    data: [path.join(MOODBOT, 'data')],
    domain: path.join(MOODBOT, 'domain.yml'),
    config: path.join(MOODBOT, config),
  };
}

/**
 * `parley run --enable-api --model <model>` in its own process group (a stuck server and its
 * embedded PostgreSQL are killed together), ready once GET /status names a model file.
 */
async function startParley(model, env, { output = 'inherit' } = {}) {
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS: extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=prof".
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, BIN, 'run', '--enable-api', '--model', model],
    {
      cwd: ROOT,
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', output, output],
      detached: true,
    },
  );
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
      child.kill('SIGTERM'); // Parley closes the app, then stops its embedded PostgreSQL
      const timer = setTimeout(() => killGroup('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    killGroup('SIGKILL'); // leftovers of the group, if any
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + SERVER_START_TIMEOUT_MS;
  let lastError = null;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`parley run exited (${child.exitCode ?? child.signalCode}) before listening`);
    }
    try {
      const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(2_000) });
      const status = await res.json();
      if (res.status === 200 && status.model_file) {
        return { url, status, close, pid: serverPid(child.pid) };
      }
      lastError = `GET /status → ${res.status} ${JSON.stringify(status)}`;
    } catch (error) {
      lastError = error.message;
    }
    await sleep(250);
  }
  await close();
  throw new Error(`parley run not ready within ${SERVER_START_TIMEOUT_MS} ms (${lastError})`);
}

/**
 * The process that serves: `parley run` starts the server once more under its Node flags
 * (src/cli/node-flags.ts), and CPU time must be read off that child, not the launcher.
 */
function serverPid(pid) {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    for (const c of children) {
      const cmdline = readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0');
      if (cmdline.some((a) => a.endsWith(path.join('bin', 'parley.js')))) return Number(c);
    }
  } catch {
    // not Linux, or the process is gone: the launcher's own pid
  }
  return pid;
}

/**
 * `--lock <value>` (a string option, one of `allowed`), taken out of `argv` before the numeric
 * options are parsed: `{ lock: null }` when absent.
 */
function takeLockOption(argv, allowed) {
  const rest = [...argv];
  const at = rest.indexOf('--lock');
  if (at === -1) return { lock: null, rest };
  const [, value] = rest.splice(at, 2);
  if (!allowed.includes(value)) throw new Error(`--lock takes one of: ${allowed.join(', ')}`);
  return { lock: value, rest };
}

/**
 * endpoints.yml lines of a Redis lock store (REDIS_URL or 127.0.0.1:6379) under a key prefix of
 * its own; a password, if any, is read from BENCH_REDIS_PASSWORD (see `redisLockEndpoints`).
 */
function redisLockLines(redis = redisUrl()) {
  return [
    'lock_store:',
    '  type: concurrent_redis',
    `  host: ${redis.hostname}`,
    `  port: ${redis.port || 6379}`,
    `  db: ${redis.pathname.slice(1) || 0}`,
    `  key_prefix: bench${Math.random().toString(36).slice(2, 10)}`,
    ...(redis.password ? ['  password: ${BENCH_REDIS_PASSWORD}'] : []),
    '',
  ].join('\n');
}

/**
 * An endpoints.yml in `dir` of a Redis lock store (`redisLockLines`), and the password to give
 * the server as BENCH_REDIS_PASSWORD; instances started with the same file share the locks.
 */
function redisLockEndpoints(dir) {
  const redis = redisUrl();
  const file = path.join(dir, 'endpoints-redis-lock.yml');
  writeFileSync(file, redisLockLines(redis));
  return { file, password: decodeURIComponent(redis.password) };
}

/** The benches' Redis: REDIS_URL or the local default. */
function redisUrl() {
  return new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
}

/** Writes `report` as indented JSON (and a final newline) to `file`, making its folder. */
function writeResults(file, report) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}

module.exports = {
  BIN,
  MOODBOT,
  ROOT,
  freePort,
  moodbotFiles,
  parseNumberArgs,
  redisLockEndpoints,
  redisLockLines,
  redisUrl,
  sleep,
  startParley,
  takeLockOption,
  trainParley,
  writeResults,
};
