import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from 'test/utils/cli';

/**
 * A PostgreSQL cluster of one test alone (never the machine's shared server): `initdb` in a temp
 * folder, started by `pg_ctl` on a free port, so the test may stop, crash and start it. Uses the
 * server binaries of /usr/lib/postgresql/<newest>/bin (or PG_BIN); run as the `postgres` OS user
 * when the tests run as root (PostgreSQL refuses to run as root).
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  readonly url: string;
  /** `pg_ctl stop -m <mode>`, waiting until the server is gone. */
  stop(mode: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** `pg_ctl start`, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (immediate) and removes its files. */
  destroy(): Promise<void>;
}

/** The folder of initdb/pg_ctl, or why there is none. */
export function postgresBinaries(): { bin: string } | { missing: string } {
  const fromEnv = process.env.PG_BIN;
  const candidates = fromEnv
    ? [fromEnv]
    : existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => join('/usr/lib/postgresql', v, 'bin'))
      : [];
  const bin = candidates.find(
    (d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl')),
  );
  if (bin === undefined) return { missing: 'no initdb/pg_ctl under /usr/lib/postgresql/*/bin' };
  if (userInfo().uid === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return { missing: 'running as root and no postgres OS user to run PostgreSQL as' };
  }
  return { bin };
}

export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'parley-private-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  // Not spawnSync: the test's load and probes keep running while pg_ctl works.
  const run = (tool: string, args: string[]): Promise<void> => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    return new Promise((resolve, reject) =>
      execFile(file, argv, { cwd: dir, timeout: 120_000 }, (error, stdout, stderr) =>
        error
          ? reject(new Error(`${tool} ${args.join(' ')} failed:\n${stdout}\n${stderr}`))
          : resolve(),
      ),
    );
  };
  const port = await freePort();
  await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`;
  const start = (): Promise<void> =>
    run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), '-o', options]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode) => run('pg_ctl', ['stop', '-D', data, '-w', '-t', '60', '-m', mode]),
    start,
    destroy: async () => {
      await run('pg_ctl', ['stop', '-D', data, '-w', '-m', 'immediate']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
