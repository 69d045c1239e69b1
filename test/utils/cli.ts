import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
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
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
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
