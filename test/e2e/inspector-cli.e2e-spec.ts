import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsFile, removeTempDirs, trainMoodbot } from 'test/utils/channels';
import { cli, startCliServer, type CliServer } from 'test/utils/cli';

afterAll(removeTempDirs);

/** `parley inspect` and `parley run --inspect` as processes, as a user starts them. */
describe('inspector start-up (CLI)', () => {
  let models: string;
  const env = (): NodeJS.ProcessEnv => ({ ...process.env, LOG_LEVEL: 'info' });

  beforeAll(() => {
    models = trainMoodbot();
  }, 180_000);

  it('parley inspect without a model: exit 1, "No model found"', () => {
    const empty = mkdtempSync(join(tmpdir(), 'parley-no-model-'));
    try {
      const run = cli(['inspect', '-m', empty]);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('No model found');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('parley inspect: the API on, the socketio page, its address printed with the token', async () => {
    let server: CliServer | null = null;
    try {
      server = await startCliServer(
        ['-m', models, '-t', 'tok en'],
        env(),
        60_000,
        undefined,
        'inspect',
      );
      const port = new URL(server.base).port;
      const printed = `Inspector: http://localhost:${port}/webhooks/socketio/inspect.html?token=tok%20en`;
      expect(server.output()).toContain(printed);
      const page = await fetch(`${server.base}/webhooks/socketio/inspect.html`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('&quot;sessionPersistence&quot;:false');
      expect((await fetch(`${server.base}/status?token=tok%20en`)).status).toBe(200);
      expect((await fetch(`${server.base}/status`)).status).toBe(401);
    } finally {
      await server?.stop();
    }
  }, 90_000);

  it('parley run --inspect: one log line per channel naming its page', async () => {
    let server: CliServer | null = null;
    try {
      server = await startCliServer(
        [
          '--inspect',
          '--enable-api',
          '-m',
          models,
          '--credentials',
          credentialsFile('socketio:\n'),
        ],
        env(),
        60_000,
      );
      const port = new URL(server.base).port;
      for (const channel of ['rest', 'socketio']) {
        expect(server.output()).toContain(
          `Development inspector for channel ${channel} is running. To inspect conversations, visit http://localhost:${port}/webhooks/${channel}/inspect.html`,
        );
        expect((await fetch(`${server.base}/webhooks/${channel}/inspect.html`)).status).toBe(200);
      }
      expect(server.output()).not.toContain('not available');
    } finally {
      await server?.stop();
    }
  }, 90_000);
});
