import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, cli, freePort, startCliServer } from 'test/utils/cli';

describe('parley CLI', () => {
  it('prints its version and help', () => {
    const v = cli(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const h = cli(['run', '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout).toContain('--enable-api');
    expect(h.stdout).toContain('--jwt-method');
  });

  it.each([
    ['an unknown flag', ['run', '--no-such-flag'], /unknown option '--no-such-flag'/],
    ['a bad port', ['run', '--port', 'eighty'], /must be a port number/],
    ['a bad JWT method', ['run', '--jwt-method', 'none'], /Allowed choices are/],
    ['a bad remote storage kind', ['run', '--remote-storage', 'ftp://x'], /PARLEY_REMOTE_STORAGE/],
    ['a missing endpoints file', ['run', '--endpoints', 'nope.yml'], /--endpoints: file not found/],
    ['an unknown command', ['fly'], /unknown command 'fly'/],
  ])('exits with 2 and a clear message on %s', (_what, args, message) => {
    const r = cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('exits with 2 on a bad environment value, naming the variable', () => {
    const r = cli(['run'], { PORT: 'x', LOCK_STORE: 'zookeeper' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('PORT');
    expect(r.stderr).toContain('LOCK_STORE');
  });

  it('exits with 2 on a PARLEY_NODE_FLAGS value that is not a Node flag', () => {
    const r = cli(['run'], { PARLEY_NODE_FLAGS: 'max-semi-space-size=32' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("PARLEY_NODE_FLAGS: 'max-semi-space-size=32' is not a Node flag");
  });

  it('`parley test` without a model fails with exit code 1, naming the path', () => {
    const r = cli(['test', '--model', 'no-such-models-dir']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no model archive found at no-such-models-dir');
  });

  it('starts on the embedded PostgreSQL with no DATABASE_URL and stops cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', PARLEY_DATA_DIR: dataDir };
    delete env.DATABASE_URL;
    const server = await startCliServer(
      ['--enable-api', '--domain', 'examples/coffee/domain.yml'],
      env,
    );
    try {
      const tracker = await fetch(`${server.base}/conversations/cli-check/tracker/events`, {
        method: 'POST',
        body: JSON.stringify({ event: 'slot', name: 'x', value: 1 }),
      });
      expect(tracker.status).toBe(200);
      // Idle connections outlive a load balancer's 60 s idle timeout (it closes them first).
      expect(tracker.headers.get('keep-alive')).toBe('timeout=65');
      expect(server.output()).toContain('embedded PostgreSQL started');
      const lines = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
      // The server runs under the launcher's Node flags (a larger young generation).
      const listening = lines
        .map((l) => JSON.parse(l) as { msg?: string; nodeFlags?: string[] })
        .find((l) => l.msg === 'Parley is listening');
      expect(listening?.nodeFlags).toContain('--max-semi-space-size=32');
    } finally {
      expect(await server.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('stops the server when its launcher is killed outright', async () => {
    const port = await freePort();
    const launcher = spawn(
      process.execPath,
      [BIN, 'run', '--domain', 'examples/coffee/domain.yml'],
      {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      },
    );
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      let ready = false;
      for (let i = 0; i < 120 && !ready; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null);
        ready = res?.status === 200;
        if (!ready) await new Promise((r) => setTimeout(r, 250));
      }
      expect(ready).toBe(true);
      const pid = launcher.pid as number;
      const [server] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .map(Number);
      expect(server).toBeGreaterThan(0);
      launcher.kill('SIGKILL'); // cannot be passed on
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        gone = !alive(server as number);
        if (!gone) await new Promise((r) => setTimeout(r, 100));
      }
      expect(gone).toBe(true);
    } finally {
      launcher.kill('SIGKILL');
    }
  }, 90_000);
});
