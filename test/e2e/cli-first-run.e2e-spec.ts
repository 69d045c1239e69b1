import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN, ROOT, cli, startCliServer } from 'test/utils/cli';

/** Runs `parley <args>` in `cwd` with `input` on stdin. */
function cliWithInput(args: string[], input: string, cwd = ROOT) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    input,
    env: { ...process.env, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('parley CLI first-run messages', () => {
  let dir: string;
  let model: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-first-run-'));
    model = join(dir, 'models');
    const trained = cli([
      'train',
      '--data',
      'test/fixtures/moodbot/data',
      '--domain',
      'test/fixtures/moodbot/domain.yml',
      '--config',
      'test/fixtures/moodbot/config.yml',
      '--out',
      model,
    ]);
    expect(trained.status).toBe(0);
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('`run --model <missing path>` exits with 2, naming the path and how to get a model', () => {
    const r = cli(['run', '--model', 'no/such/model.tar.gz']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--model: no model archive or folder at no/such/model.tar.gz');
    expect(r.stderr).toContain('parley train');
  });

  it('a DATABASE_URL naming a missing database fails in one line, without a stack trace', () => {
    const server = process.env.PARLEY_TEST_SERVER_URL ?? process.env.DATABASE_URL ?? '';
    const url = new URL(server);
    url.pathname = '/parley_no_such_database';
    const r = cli(['run', '--enable-api'], { DATABASE_URL: url.toString(), LOG_LEVEL: 'info' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('database "parley_no_such_database" does not exist');
    expect(lines[0]).toContain('DATABASE_URL');
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/^\s+at /m);
  });

  it('an embedded PostgreSQL that cannot start fails in one line naming the cause and the fix', async () => {
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const address = holder.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    // Under the shared temporary folder: reachable by the postgres OS user when run as root.
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-pg-port-'));
    try {
      const r = cli(['run', '--enable-api'], {
        DATABASE_URL: undefined as unknown as string,
        EMBEDDED_PG_PORT: String(port),
        PARLEY_DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      });
      expect(r.status).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`embedded PostgreSQL: port ${port} is in use`);
      expect(lines[0]).toContain('EMBEDDED_PG_PORT');
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise((done) => holder.close(done));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('`test core` without --stories names the default folder it looked for', () => {
    const r = cli(['test', 'core', '--model', model], {}, 60_000, dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`the default folder ${resolve(dir, 'tests')} does not exist`);
    expect(r.stderr).toContain('--stories');
    expect(r.stderr).not.toContain('ENOENT');
  });

  it('`shell` without a model says to train one', () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const r = cliWithInput(['shell'], 'hello\n', empty);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no model archive found at models');
    expect(r.stderr).toContain('train one first');
  });

  it('`shell nlu` prints one JSON result per line', () => {
    const r = cliWithInput(['shell', 'nlu', '--model', model], 'hello\nI am sad\n');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const parsed = lines.map((l) => JSON.parse(l) as { text: string; intent: { name: string } });
    expect(parsed.map((p) => p.text)).toEqual(['hello', 'I am sad']);
    expect(parsed[0]?.intent.name).toBe('greet');
  });

  it('`/stop` ends `shell`, as in Rasa', () => {
    const r = cliWithInput(['shell', '--model', model], 'hello\n/stop\nhello\n');
    expect(r.status).toBe(0);
    expect(r.stdout.split('Hi there! How is your day going?')).toHaveLength(2);
  });

  it('`run --help` names the environment variables and does not promise what is not built', () => {
    const h = cli(['run', '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout).toContain('DATABASE_URL');
    expect(h.stdout).toContain('.env.example');
    const help = h.stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--inspect serve the development inspector: a page per input channel/);
    expect(help).toContain('gcs and azure are not built in and are refused');
  });

  it.each(['gcs', 'azure'])('`--remote-storage %s` is refused with exit code 2', (kind) => {
    for (const command of ['run', 'train']) {
      const r = cli(
        command === 'run'
          ? [command, '--remote-storage', kind, '--model', 'x']
          : [command, '--remote-storage', kind],
      );
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`--remote-storage ${kind}: not built into Parley`);
    }
  });

  it.each([
    ['by default', undefined, false],
    ['with LOG_REQUESTS=true', 'true', true],
  ])(
    'at LOG_LEVEL=info writes request lines %s only as asked (the request id echoed either way), route mapping never, start-up in order',
    async (_what, logRequests, written) => {
      const server = await startCliServer(
        ['--enable-api', '--domain', 'test/fixtures/moodbot/domain.yml'],
        {
          ...process.env,
          LOG_LEVEL: 'info',
          LOG_REQUESTS: logRequests,
        },
      );
      try {
        const res = await fetch(`${server.base}/version`, {
          headers: { 'x-request-id': 'first-run.42' },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-request-id')).toBe('first-run.42');
      } finally {
        expect(await server.stop()).toBe(0);
      }
      const out = server.output();
      expect(out.includes('"msg":"request completed"')).toBe(written);
      // The log line carries the id the response echoed.
      expect(out.includes('"req":{"id":"first-run.42"')).toBe(written);
      expect(out).not.toContain('Mapped {');
      const started = out.indexOf('Nest application successfully started');
      expect(started).toBeGreaterThan(-1);
      expect(out.indexOf('Parley is listening')).toBeGreaterThan(started);
    },
    120_000,
  );
});
