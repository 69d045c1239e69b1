import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { BIN, ROOT, type CliServer } from 'test/utils/cli';

/**
 * A second host on this machine: a Linux network namespace joined to the root namespace by two
 * veth pairs, each a /30 of its own:
 * - the data link: the only way from the namespace to the services; the test runs TCP proxies
 *   on its root end (`hostAddress`) to PostgreSQL, Redis, the action server;
 * - the probe link: how the test reaches a server in the namespace (`address`), left untouched
 *   by a partition, so readiness and requests can be watched while the data link is cut.
 * Needs root (`ip netns`, `ip link`, `tc`).
 */
export interface NetnsHost {
  readonly namespace: string;
  /** The root end of the data link: listen here to be reachable from the namespace. */
  readonly hostAddress: string;
  /** The namespace's end of the probe link: a server in the namespace listens here. */
  readonly address: string;
  /**
   * Cuts the data link: `down` (link down) or `loss` (every packet dropped both ways: netem loss
   * 100 %, or a tbf no packet fits through when the kernel has no netem).
   */
  partition(mode: PartitionMode): void;
  /** Undoes `partition`. */
  heal(): void;
  /** Removes the namespace and both links (idempotent; safe after a failed setup). */
  destroy(): void;
}

export type PartitionMode = 'down' | 'loss';

function run(cmd: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

function must(cmd: string, args: string[]): void {
  const r = run(cmd, args);
  if (!r.ok) throw new Error(`${cmd} ${args.join(' ')}: ${r.out}`);
}

/**
 * Why network namespaces cannot be used here (one line), or null when they can: `ip netns add`
 * must work (root) and `tc` must exist.
 */
export function netnsUnavailable(): string | null {
  const probe = `parley-probe-${randomBytes(3).toString('hex')}`;
  const added = run('ip', ['netns', 'add', probe]);
  if (!added.ok) return `ip netns add failed (${added.out.split('\n')[0] || 'no ip'})`;
  run('ip', ['netns', 'del', probe]);
  if (!run('tc', ['-V']).ok) return 'no tc on PATH';
  return null;
}

/** A /30 under 10.<first>.x.y that no interface uses: [network base a.b.c, last octet]. */
function freeSubnet(first: number, taken: string): [string, number] {
  for (;;) {
    const third = randomBytes(1)[0] ?? 0;
    const fourth = ((randomBytes(1)[0] ?? 0) & 0xfc) % 252;
    const base = `10.${first}.${third}`;
    if (!taken.includes(` ${base}.${fourth + 1}/`) && !taken.includes(` ${base}.${fourth + 2}/`)) {
      return [base, fourth];
    }
  }
}

/**
 * Drops every packet leaving `dev`: netem loss 100 %, or, on a kernel without netem, a token
 * bucket smaller than any packet (tbf burst 1 byte), which lets none through.
 */
function dropAll(prefix: string[], dev: string): void {
  const [cmd, ...rest] = [...prefix, 'tc', 'qdisc', 'add', 'dev', dev, 'root'];
  const netem = run(cmd ?? 'tc', [...rest, 'netem', 'loss', '100%']);
  if (netem.ok) return;
  if (!netem.out.includes('unknown')) throw new Error(`tc netem on ${dev}: ${netem.out}`);
  must(cmd ?? 'tc', [...rest, 'tbf', 'rate', '1kbit', 'burst', '1', 'limit', '1']);
}

/** Creates the namespace and both links under unique names. */
export function createNetnsHost(): NetnsHost {
  const id = randomBytes(3).toString('hex');
  const namespace = `parley-${id}`;
  const data = { host: `pd${id}h`, ns: `pd${id}n` };
  const probe = { host: `pp${id}h`, ns: `pp${id}n` };
  const taken = run('ip', ['-o', 'addr']).out;
  const [dataBase, dataLast] = freeSubnet(201, taken);
  const [probeBase, probeLast] = freeSubnet(202, taken);
  const hostAddress = `${dataBase}.${dataLast + 1}`;
  const address = `${probeBase}.${probeLast + 2}`;
  const inNs = (args: string[]): void => must('ip', ['netns', 'exec', namespace, ...args]);
  let partitioned: PartitionMode | null = null;

  const destroy = (): void => {
    run('ip', ['netns', 'del', namespace]);
    // Deleting the namespace deletes its veth ends and so both pairs; in case it did not:
    run('ip', ['link', 'del', data.host]);
    run('ip', ['link', 'del', probe.host]);
  };
  try {
    must('ip', ['netns', 'add', namespace]);
    inNs(['ip', 'link', 'set', 'lo', 'up']);
    const links: Array<[typeof data, string, number]> = [
      [data, dataBase, dataLast],
      [probe, probeBase, probeLast],
    ];
    for (const [link, base, last] of links) {
      must('ip', ['link', 'add', link.host, 'type', 'veth', 'peer', 'name', link.ns]);
      must('ip', ['link', 'set', link.ns, 'netns', namespace]);
      must('ip', ['addr', 'add', `${base}.${last + 1}/30`, 'dev', link.host]);
      inNs(['ip', 'addr', 'add', `${base}.${last + 2}/30`, 'dev', link.ns]);
      must('ip', ['link', 'set', link.host, 'up']);
      inNs(['ip', 'link', 'set', link.ns, 'up']);
    }
  } catch (error) {
    destroy();
    throw error;
  }
  return {
    namespace,
    hostAddress,
    address,
    partition(mode) {
      if (partitioned !== null) throw new Error(`already partitioned (${partitioned})`);
      if (mode === 'down') {
        must('ip', ['link', 'set', data.host, 'down']);
      } else {
        dropAll([], data.host);
        dropAll(['ip', 'netns', 'exec', namespace], data.ns);
      }
      partitioned = mode;
    },
    heal() {
      if (partitioned === 'down') must('ip', ['link', 'set', data.host, 'up']);
      if (partitioned === 'loss') {
        must('tc', ['qdisc', 'del', 'dev', data.host, 'root']);
        inNs(['tc', 'qdisc', 'del', 'dev', data.ns, 'root']);
      }
      partitioned = null;
    },
    destroy,
  };
}

/**
 * `parley run <args>` inside the namespace, listening on the probe link's address; waits until
 * `/health/ready` answers 200 (throws with the process output otherwise).
 */
export async function startNetnsCliServer(
  host: NetnsHost,
  args: string[],
  env: NodeJS.ProcessEnv,
  readyTimeoutMs = 120_000,
): Promise<CliServer> {
  const port = 5005;
  // `ip netns exec` execs the command: the child's pid is the server's.
  const child = spawn(
    'ip',
    ['netns', 'exec', host.namespace, process.execPath, BIN, 'run', ...args],
    {
      cwd: ROOT,
      env: { ...env, PORT: String(port), HOST: host.address },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  const base = `http://${host.address}:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline && child.exitCode === null) {
    const ready = await fetch(`${base}/health/ready`).catch(() => null);
    if (ready?.status === 200) {
      return {
        base,
        output: () => output,
        stop,
        running: () => child.exitCode === null && child.signalCode === null,
        kill: (signal) => child.kill(signal),
        exited,
      };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`parley run in ${host.namespace} did not become ready:\n${output}`);
}
