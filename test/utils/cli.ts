import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The repository root and the compiled CLI the tests run (built by `npm test`). */
export const ROOT = join(__dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'parley.js');

/** Runs `parley <args>` to completion, quiet unless `env` says otherwise. */
export function cli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  cwd = ROOT,
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
}

/**
 * `cli()` without blocking this process: needed when the CLI talks to a server running inside
 * the test process (an S3 server, a model server).
 */
export function cliAsync(
  args: string[],
  env: Record<string, string> = {},
  cwd = ROOT,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** A `parley run` child process listening on 127.0.0.1. */
export interface CliServer {
  readonly base: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** Whether the process is still running. */
  running(): boolean;
  /** Sends a signal without waiting. */
  kill(signal: NodeJS.Signals): void;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
}

/**
 * Spawns `parley run <args>` on a free port and waits until `/health/ready` answers 200
 * (throws with the process output otherwise, after about `readyTimeoutMs`).
 */
export async function startCliServer(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  readyTimeoutMs = 30_000,
  /** A given port (e.g. a replica restarted where the load balancer expects it); else a free one. */
  fixedPort?: number,
  /** The server command: `run`, or `inspect`. */
  command: 'run' | 'inspect' = 'run',
): Promise<CliServer> {
  const port = fixedPort ?? (await freePort());
  const child = spawn(process.execPath, [BIN, command, ...args], {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  const base = `http://127.0.0.1:${port}`;
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
  throw new Error(`parley ${command} did not become ready:\n${output}`);
}
