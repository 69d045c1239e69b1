import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { cliAsync, startCliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';

/**
 * endpoints.yml's `tracker_store` and `lock_store` at `parley run`: a store Parley does not
 * serve stops the start with a message naming what is supported; `tracker_store: type: sql`
 * is the database when DATABASE_URL is unset, and loses to DATABASE_URL (with a log line) when
 * both are set.
 */
describe('tracker_store and lock_store at start', () => {
  jest.setTimeout(60_000);
  let dir: string;
  const file = (name: string, yaml: string): string => {
    const path = join(dir, name);
    writeFileSync(path, yaml);
    return path;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-stores-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'lock_store:\n  type: mongo\n',
      "lock_store type 'mongo' is not supported; supported: redis, concurrent_redis, in_memory",
    ],
    [
      'tracker_store:\n  type: redis\n  url: localhost\n',
      "tracker_store type 'redis' is not supported; supported: sql (dialect: postgresql)",
    ],
    [
      'tracker_store:\n  type: sql\n  dialect: sqlite\n  db: rasa.db\n',
      "tracker_store dialect 'sqlite' is not supported; supported: sql (dialect: postgresql)",
    ],
  ])('refuses to start with %j, naming what is supported', async (yaml, message) => {
    const endpoints = file(`${uniqueId('bad')}.yml`, yaml);
    const run = await cliAsync(['run', '--enable-api', '--endpoints', endpoints, '--port', '0']);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(message);
  });

  it('stores conversations where tracker_store says when DATABASE_URL is unset', async () => {
    const databaseUrl = new URL(process.env.DATABASE_URL as string);
    const endpoints = file(
      'sql.yml',
      [
        'tracker_store:',
        '  type: sql',
        '  dialect: postgresql',
        `  url: ${databaseUrl.hostname}`,
        `  port: ${databaseUrl.port || 5432}`,
        `  db: ${databaseUrl.pathname.slice(1)}`,
        `  username: ${decodeURIComponent(databaseUrl.username) || 'postgres'}`,
        ...(databaseUrl.password ? ['  password: ${TEST_PG_PASSWORD}'] : []),
        '',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEST_PG_PASSWORD: decodeURIComponent(databaseUrl.password),
      LOG_LEVEL: 'info',
    };
    delete env.DATABASE_URL;
    const server = await startCliServer(
      ['--enable-api', '--endpoints', endpoints, '--domain', 'test/fixtures/moodbot/domain.yml'],
      env,
    );
    const id = uniqueId('sql-store');
    try {
      const res = await fetch(`${server.base}/conversations/${id}/tracker/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'slot', name: 'name', value: 'x' }),
      });
      expect(res.status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(server.output()).toContain('conversations stored as endpoints.yml tracker_store says');
    expect(server.output()).not.toContain(databaseUrl.password || '\u0000never');
    const pg = new Client({ connectionString: process.env.DATABASE_URL });
    await pg.connect();
    try {
      const rows = await pg.query('SELECT id FROM conversation WHERE id = $1', [id]);
      expect(rows.rowCount).toBe(1);
    } finally {
      await pg.end();
    }
  });

  it('lets DATABASE_URL win over a different tracker_store, saying so', async () => {
    const endpoints = file(
      'other.yml',
      'tracker_store:\n  type: sql\n  dialect: postgresql\n  url: elsewhere.invalid\n  db: other\n',
    );
    const server = await startCliServer(['--enable-api', '--endpoints', endpoints], {
      ...process.env,
      LOG_LEVEL: 'info',
    });
    try {
      expect((await fetch(`${server.base}/`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    expect(server.output()).toContain(
      'DATABASE_URL and endpoints.yml tracker_store name different databases: DATABASE_URL wins',
    );
  });
});
