import Redis from 'ioredis';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasRedisServer } from './redis';

/**
 * Private Redis deployments for the lock store's high-availability and TLS modes: a Redis
 * Cluster of three masters, a master watched by a Sentinel (with a replica to fail over to),
 * and a TLS-only server with certificates made by the `openssl` CLI. Each runs on free
 * loopback ports in a directory of its own and is killed after its suite; the machine's shared
 * Redis is never touched. Without the binaries (or a redis-server built without TLS) the
 * `describeWith…` helpers print one line and skip their suite.
 */

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function freePort(): Promise<number> {
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

/** One command to a plain (non-TLS) server; its reply, or null when it does not answer. */
async function ask(port: number, [name, ...args]: [string, ...string[]]): Promise<unknown> {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 1000,
    commandTimeout: 2000,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await redis.call(name, ...args);
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

const text = (reply: unknown): string => JSON.stringify(reply ?? null);

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** A process of the deployment: it may be killed and started again with the same arguments. */
interface Proc {
  readonly port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function redisProcess(port: number, args: string[], ready: () => Promise<boolean>): Proc {
  let child: ChildProcess | null = null;
  let stderr = '';
  return {
    port,
    async start() {
      const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      proc.stdout?.on('data', (d) => (stderr = (stderr + String(d)).slice(-2000)));
      proc.stderr?.on('data', (d) => (stderr = (stderr + String(d)).slice(-2000)));
      await waitFor(`redis-server on port ${port}`, async () => {
        if (proc.exitCode !== null) throw new Error(`redis-server exited: ${stderr}`);
        return ready();
      });
    },
    async stop() {
      const proc = child;
      child = null;
      if (proc === null || proc.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

const pings = (port: number) => async () => (await ask(port, ['PING'])) === 'PONG';
const base = (port: number, dir: string) => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--dir',
  dir,
  '--save',
  '',
  '--appendonly',
  'no',
];

// ---------------------------------------------------------------------------------------------
// Redis Cluster

export interface PrivateCluster {
  /** "127.0.0.1:port" of every master (the lock store's `endpoints`). */
  readonly endpoints: string[];
  readonly ports: number[];
  stop(): Promise<void>;
}

function hasRedisCli(): boolean {
  return spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Three masters (no replicas), all 16384 slots assigned, `cluster_state:ok` on each. */
export async function startPrivateCluster(masters = 3): Promise<PrivateCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) ports.push(await freePort());
  const procs = ports.map((port) =>
    redisProcess(
      port,
      [
        ...base(port, dir),
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        // Redis's default. With 2 s, a node the loaded test machine starves for two seconds is
        // marked failing by the others and the cluster goes down — a likely cause of one
        // LOCK.STORE_UNAVAILABLE seen in a full run. No test here needs failures detected fast.
        '--cluster-node-timeout',
        '15000',
      ],
      pings(port),
    ),
  );
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(procs.map((p) => p.start()));
    const endpoints = ports.map((p) => `127.0.0.1:${p}`);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...endpoints, '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (create.status !== 0) {
      throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    }
    await waitFor('cluster_state:ok on every node', async () => {
      const states = await Promise.all(ports.map((p) => ask(p, ['CLUSTER', 'INFO'])));
      return states.every((s) => text(s).includes('cluster_state:ok'));
    });
    return { endpoints, ports, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export function describeWithRedisCluster(
  name: string,
  body: (cluster: () => PrivateCluster) => void,
): void {
  if (!hasRedisServer() || !hasRedisCli()) {
    process.stdout.write(`redis-server or redis-cli not on PATH; "${name}" tests skipped\n`);
    describe.skip(name, () => body(() => ({ endpoints: [], ports: [], stop: async () => {} })));
    return;
  }
  describe(name, () => {
    let cluster: PrivateCluster | undefined;
    beforeAll(async () => {
      cluster = await startPrivateCluster();
    }, 90_000);
    afterAll(async () => {
      await cluster?.stop();
    });
    body(() => {
      if (cluster === undefined) throw new Error('the cluster is not ready yet');
      return cluster;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Sentinel

export interface PrivateSentinel {
  /** "127.0.0.1:port" of the sentinel (the lock store's `endpoints`). */
  readonly endpoints: string[];
  readonly service: string;
  /** Port of the current master, as the sentinel tells it. */
  masterPort(): Promise<number>;
  /** Ports of the two data servers (the first starts as master). */
  readonly dataPorts: number[];
  /**
   * Promotes the replica (SENTINEL FAILOVER); resolves with its port once the sentinel names it
   * and the former master has turned replica.
   */
  failover(): Promise<number>;
  stop(): Promise<void>;
}

export async function startPrivateSentinel(service = 'parleymaster'): Promise<PrivateSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-sentinel-'));
  const [masterPort, replicaPort, sentinelPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const master = redisProcess(masterPort, base(masterPort, dir), pings(masterPort));
  const replica = redisProcess(
    replicaPort,
    [...base(replicaPort, dir), '--replicaof', '127.0.0.1', String(masterPort)],
    pings(replicaPort),
  );
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${service} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${service} 1000`,
      `sentinel failover-timeout ${service} 10000`,
      '',
    ].join('\n'),
  );
  const currentMaster = async (): Promise<number | null> => {
    const reply = await ask(sentinelPort, ['SENTINEL', 'get-master-addr-by-name', service]);
    const port: unknown = Array.isArray(reply) ? reply[1] : null;
    return typeof port === 'string' && /^\d+$/.test(port) ? Number(port) : null;
  };
  const sentinel = redisProcess(
    sentinelPort,
    [conf, '--sentinel'],
    async () => (await currentMaster()) !== null,
  );
  const procs = [master, replica, sentinel];
  const stop = async () => {
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await master.start();
    await replica.start();
    await waitFor('the replica in sync', async () => {
      const info = await ask(replicaPort, ['INFO', 'replication']);
      return text(info).includes('master_link_status:up');
    });
    await sentinel.start();
    // The sentinel must know the replica before it can fail over to it.
    await waitFor('the sentinel sees the replica', async () => {
      const reply = await ask(sentinelPort, ['SENTINEL', 'replicas', service]);
      return text(reply).includes(String(replicaPort));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    endpoints: [`127.0.0.1:${sentinelPort}`],
    service,
    dataPorts: [masterPort, replicaPort],
    async masterPort() {
      const port = await currentMaster();
      if (port === null) throw new Error('the sentinel names no master');
      return port;
    },
    async failover() {
      const before = await currentMaster();
      const reply = await ask(sentinelPort, ['SENTINEL', 'FAILOVER', service]);
      if (reply !== 'OK') throw new Error(`SENTINEL FAILOVER: ${text(reply)}`);
      let after: number | null = null;
      await waitFor('the sentinel names the new master', async () => {
        after = await currentMaster();
        if (after === null || after === before) return false;
        const role = await ask(after, ['ROLE']);
        return Array.isArray(role) && role[0] === 'master';
      });
      // And the former master is a replica now (until then it still takes writes).
      await waitFor('the former master turned replica', async () => {
        const role = before === null ? null : await ask(before, ['ROLE']);
        return Array.isArray(role) && role[0] === 'slave';
      });
      return after as unknown as number;
    },
    stop,
  };
}

export function describeWithRedisSentinel(
  name: string,
  body: (sentinel: () => PrivateSentinel) => void,
): void {
  if (!hasRedisServer()) {
    process.stdout.write(`redis-server not on PATH; "${name}" tests skipped\n`);
    describe.skip(name, () => body(() => ({}) as PrivateSentinel));
    return;
  }
  describe(name, () => {
    let sentinel: PrivateSentinel | undefined;
    beforeAll(async () => {
      sentinel = await startPrivateSentinel();
    }, 60_000);
    afterAll(async () => {
      await sentinel?.stop();
    });
    body(() => {
      if (sentinel === undefined) throw new Error('the sentinel is not ready yet');
      return sentinel;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// TLS

export interface TlsFiles {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A CA that signed neither certificate (verification must fail with it). */
  readonly otherCaCert: string;
}

export interface PrivateTlsRedis {
  readonly port: number;
  readonly files: TlsFiles;
  stop(): Promise<void>;
}

let tlsSupport: string | null | undefined;

/** null when redis-server serves TLS; else why not (decided once, synchronously). */
export function tlsUnsupported(): string | null {
  if (tlsSupport !== undefined) return tlsSupport;
  if (!hasRedisServer()) return (tlsSupport = 'redis-server not on PATH');
  if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status !== 0) {
    return (tlsSupport = 'openssl not on PATH');
  }
  // A build without TLS refuses the directive itself; one with TLS fails on the missing file.
  const probe = spawnSync(
    'redis-server',
    ['--port', '0', '--tls-port', '1', '--tls-cert-file', '/nonexistent/cert.pem'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  const out = `${probe.stdout}${probe.stderr}`;
  tlsSupport = /Bad directive|not supported|TLS.*not.*built/i.test(out)
    ? 'redis-server is built without TLS'
    : null;
  return tlsSupport;
}

function openssl(dir: string, args: string[]): void {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, all signed by it. */
export function makeTlsFiles(): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'parley-tls-'));
  const ca = (name: string) => {
    openssl(dir, ['genrsa', '-out', `${name}.key`, '2048']);
    openssl(dir, [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}.key`,
      '-days',
      '2',
      '-subj',
      `/CN=Parley test ${name}`,
      '-out',
      `${name}.crt`,
    ]);
  };
  ca('ca');
  ca('otherca');
  const leaf = (name: string, ext: string) => {
    openssl(dir, ['genrsa', '-out', `${name}.key`, '2048']);
    openssl(dir, [
      'req',
      '-new',
      '-key',
      `${name}.key`,
      '-subj',
      `/CN=${name}`,
      '-out',
      `${name}.csr`,
    ]);
    writeFileSync(join(dir, `${name}.ext`), ext);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ]);
  };
  leaf('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
    otherCaCert: join(dir, 'otherca.crt'),
  };
}

/** A redis-server serving TLS only, requiring a client certificate signed by the test CA. */
export async function startPrivateTlsRedis(): Promise<PrivateTlsRedis> {
  const files = makeTlsFiles();
  const port = await freePort();
  const proc = redisProcess(
    port,
    [
      ...base(0, files.dir),
      '--tls-port',
      String(port),
      '--tls-cert-file',
      files.serverCert,
      '--tls-key-file',
      files.serverKey,
      '--tls-ca-cert-file',
      files.caCert,
      '--tls-auth-clients',
      'yes',
    ],
    () => listening(port),
  );
  try {
    await proc.start();
  } catch (err) {
    rmSync(files.dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    files,
    async stop() {
      await proc.stop();
      rmSync(files.dir, { recursive: true, force: true });
    },
  };
}

export function describeWithTlsRedis(
  name: string,
  body: (redis: () => PrivateTlsRedis) => void,
): void {
  const why = tlsUnsupported();
  if (why !== null) {
    process.stdout.write(`${why}; "${name}" tests skipped\n`);
    describe.skip(name, () => body(() => ({}) as PrivateTlsRedis));
    return;
  }
  describe(name, () => {
    let redis: PrivateTlsRedis | undefined;
    beforeAll(async () => {
      redis = await startPrivateTlsRedis();
    }, 60_000);
    afterAll(async () => {
      await redis?.stop();
    });
    body(() => {
      if (redis === undefined) throw new Error('the TLS redis-server is not ready yet');
      return redis;
    });
  });
}
