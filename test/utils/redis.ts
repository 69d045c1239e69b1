import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { NO_TLS_FILES, type RedisConnectionSettings } from 'src/modules/tracker';

/**
 * Redis for tests. The suite's Redis is, in order: `REDIS_URL`; 127.0.0.1:6379 when it answers
 * PING; a private `redis-server` from PATH on a free port (stopped after the suite). When none
 * is possible, `describeWithRedis` prints one line and skips its suite.
 */
export interface TestRedis {
  readonly url: string;
  readonly host: string;
  readonly port: number;
}

/** A redis-server of this test alone: it may be stopped and started again on its port. */
export interface PrivateRedis extends TestRedis {
  stop(): Promise<void>;
  start(): Promise<void>;
}

const LOCAL_URL = 'redis://127.0.0.1:6379';

type Source = { kind: 'url'; url: string } | { kind: 'spawn' } | { kind: 'none'; why: string };

let source: Source | undefined;

/** Decided once per test file, synchronously (jest collects tests synchronously). */
function redisSource(): Source {
  if (source !== undefined) return source;
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) source = { kind: 'url', url: fromEnv };
  else if (pingsSync(6379)) source = { kind: 'url', url: LOCAL_URL };
  else if (hasRedisServer()) source = { kind: 'spawn' };
  else source = { kind: 'none', why: `no Redis at ${LOCAL_URL} and no redis-server on PATH` };
  return source;
}

/** Whether a private redis-server can be started (for the outage tests). */
export function hasRedisServer(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return probe.status === 0;
}

function pingsSync(port: number): boolean {
  const script = `const s=require('net').connect(${port},'127.0.0.1');s.setTimeout(1000);
s.on('connect',()=>s.write('PING\\r\\n'));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));
s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  return spawnSync(process.execPath, ['-e', script], { stdio: 'ignore' }).status === 0;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setTimeout(500);
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => {
      resolve(String(d).startsWith('+PONG'));
      s.destroy();
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      resolve(false);
      s.destroy();
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a redis-server of the caller's own on a free loopback port (no persistence). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = proc;
    const deadline = Date.now() + 10_000;
    while (!(await ping(port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited (${proc.exitCode})`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = null;
    if (proc === null || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, host: '127.0.0.1', port, stop, start };
}

function parse(url: string): TestRedis {
  const u = new URL(url);
  return { url, host: u.hostname || '127.0.0.1', port: Number(u.port || '6379') };
}

/**
 * `describe` with a Redis: `redis()` gives it inside hooks and tests. Without one, prints one
 * clear line and skips the suite (never fails on a machine without Redis).
 */
export function describeWithRedis(name: string, body: (redis: () => TestRedis) => void): void {
  const found = redisSource();
  if (found.kind === 'none') {
    process.stdout.write(`Redis not reachable: ${found.why}; "${name}" tests skipped\n`);
    describe.skip(name, () => body(() => parse(LOCAL_URL)));
    return;
  }
  describe(name, () => {
    let redis: TestRedis | undefined;
    let own: PrivateRedis | undefined;
    beforeAll(async () => {
      if (found.kind === 'url') redis = parse(found.url);
      else redis = own = await startPrivateRedis();
    });
    afterAll(async () => {
      await own?.stop();
    });
    body(() => {
      if (redis === undefined) throw new Error('Redis is not ready yet (use it inside a test)');
      return redis;
    });
  });
}

/** A key prefix no other test uses (alphanumeric, as `key_prefix` must be). */
export function uniqueKeyPrefix(label = 't'): string {
  return `${label}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** The lock store's connection settings for a test Redis (socket_timeout 2 s unless given). */
export function redisConnection(
  redis: Pick<TestRedis, 'url'>,
  socketTimeoutMs = 2000,
): RedisConnectionSettings {
  const url = new URL(redis.url);
  return {
    deploymentMode: 'standard',
    endpoints: [],
    sentinelService: null,
    tlsFiles: NO_TLS_FILES,
    host: url.hostname || '127.0.0.1',
    port: Number(url.port || '6379'),
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    username: url.username !== '' ? decodeURIComponent(url.username) : null,
    password: url.password !== '' ? decodeURIComponent(url.password) : null,
    useSsl: url.protocol === 'rediss:',
    socketTimeoutMs,
  };
}
