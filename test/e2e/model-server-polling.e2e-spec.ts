import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ModelServerPoller } from 'src/modules/model';
import request from 'supertest';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import {
  startModelServer,
  trainMoodbot,
  waitFor,
  type TestModelServer,
} from 'test/utils/model-fixtures';

const TOKEN_VAR = 'PARLEY_TEST_MODEL_SERVER_TOKEN';

function endpointsFile(dir: string, body: string): string {
  const file = join(dir, `endpoints-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(file, body);
  return file;
}

describe('model server polling (endpoints.yml models:)', () => {
  let dir: string;
  let a: string;
  let b: string;
  let server: TestModelServer;
  let t: TestApp;
  let poller: ModelServerPoller;

  const modelFile = async (): Promise<string> =>
    (await request(t.url).get('/status')).body.model_file as string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-polling-'));
    [a, b] = (await trainMoodbot(['model-a', 'model-b'], dir)) as [string, string];
    server = await startModelServer();
    server.publish({ path: a, etag: '"etag-a"' });
    process.env[TOKEN_VAR] = 's3cret';
    const endpoints = endpointsFile(
      dir,
      [
        'models:',
        `  url: ${server.url}`,
        `  token: \${${TOKEN_VAR}}`,
        '  token_name: auth',
        '  params: { channel: stable }',
        '  headers: { X-Team: bots }',
        '  basic_auth: { username: puller, password: pw }',
        '  wait_time_between_pulls: 0.05',
        '',
      ].join('\n'),
    );
    t = await startTestApp({ env: { PARLEY_ENDPOINTS: endpoints }, withDomain: false });
    poller = t.app.get(ModelServerPoller);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await server?.close();
    delete process.env[TOKEN_VAR];
    rmSync(dir, { recursive: true, force: true });
  });

  it('pulls at start with the configured query, headers and basic auth', async () => {
    expect(await modelFile()).toBe(basename(a));
    const [first] = server.requests;
    if (first === undefined) throw new Error('the model server saw no request');
    const url = new URL(first.url, 'http://x');
    expect(url.searchParams.get('auth')).toBe('s3cret');
    expect(url.searchParams.get('channel')).toBe('stable');
    expect(first.headers['x-team']).toBe('bots');
    expect(first.headers.authorization).toBe(
      `Basic ${Buffer.from('puller:pw').toString('base64')}`,
    );
    // Before the first model, a random fingerprint (Rasa sends a uuid hex).
    expect(first.headers['if-none-match']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('keeps polling with If-None-Match = ETag of the served model; 304 keeps it', async () => {
    const seen = server.requests.length;
    await waitFor(() => server.requests.length >= seen + 3, 'three more pulls');
    const later = server.requests.slice(seen);
    expect(later.every((r) => r.headers['if-none-match'] === '"etag-a"')).toBe(true);
    expect(later.every((r) => r.status === 304)).toBe(true);
    expect(await modelFile()).toBe(basename(a));
  });

  it('rolls over to a new model while a conversation continues, with no failed request', async () => {
    const id = uniqueId('rollover');
    const statuses: number[] = [];
    let sent = 0;
    let stopAt = Number.POSITIVE_INFINITY;
    const talk = async (): Promise<void> => {
      while (sent < stopAt) {
        const msg = await request(t.url)
          .post(`/conversations/${id}/messages`)
          .send({ text: `I am sad ${sent}`, sender: 'user' });
        const parse = await request(t.url).post('/model/parse').send({ text: 'great' });
        statuses.push(msg.status, parse.status);
        sent++;
      }
    };
    const conversation = talk();
    await waitFor(() => sent >= 3, 'the conversation to start');
    server.publish({ path: b, etag: '"etag-b"' });
    await waitFor(async () => (await modelFile()) === basename(b), 'model b to be served');
    const sentAtRollover = sent;
    stopAt = sent + 5;
    await conversation;
    expect(sent).toBeGreaterThan(sentAtRollover);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const tracker = await request(t.url).get(`/conversations/${id}/tracker`);
    const users = (tracker.body.events as Array<{ event: string; text?: string }>).filter(
      (e) => e.event === 'user',
    );
    expect(users.map((e) => e.text)).toEqual(
      Array.from({ length: sent }, (_v, i) => `I am sad ${i}`),
    );
    const after = server.requests.length;
    await waitFor(() => server.requests.length >= after + 2, 'two more pulls');
    expect(server.requests.at(-1)?.headers['if-none-match']).toBe('"etag-b"');
  });

  it.each([
    ['a 500', 'error'],
    ['a bad archive', 'garbage'],
    ['no ETag', 'no-etag'],
  ] as const)('keeps the served model on %s, and counts the failure', async (_what, mode) => {
    const before = await modelFile();
    const failed = poller.stats.failed;
    server.mode = mode;
    try {
      await waitFor(() => poller.stats.failed >= failed + 1, 'a failed pull');
      expect(await modelFile()).toBe(before);
      const parse = await request(t.url).post('/model/parse').send({ text: 'I am sad' });
      expect(parse.status).toBe(200);
    } finally {
      server.mode = 'serve';
    }
  });

  it('keeps the served model when the server has none (404)', async () => {
    const before = await modelFile();
    const unchanged = poller.stats.unchanged;
    server.publish(null);
    try {
      await waitFor(() => poller.stats.unchanged >= unchanged + 2, 'two 404 pulls');
      expect(server.requests.at(-1)?.status).toBe(404);
      expect(await modelFile()).toBe(before);
    } finally {
      server.publish({ path: b, etag: '"etag-b"' });
    }
  });

  it('DELETE /model stops polling; PUT /model with a model_server polls that server', async () => {
    await request(t.url).delete('/model').expect(204);
    // A pull sent just before the DELETE may still arrive: let it land, then polling (every
    // 50 ms before) must stay silent for ten intervals.
    await new Promise((r) => setTimeout(r, 150));
    const seen = server.requests.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(server.requests.length).toBe(seen);
    // Polling has stopped: the next PUT is the only request the server sees.
    server.publish({ path: a, etag: '"etag-a2"' });
    const put = await request(t.url)
      .put('/model')
      .send({ model_server: { url: server.url, wait_time_between_pulls: 0.05 } });
    expect(put.status).toBe(204);
    expect(server.requests.length).toBe(seen + 1);
    expect(await modelFile()).toBe(basename(a));
    server.publish({ path: b, etag: '"etag-b2"' });
    await waitFor(async () => (await modelFile()) === basename(b), 'the PUT server to be polled');
  });
});

describe('Parley as a model server (GET /models/<name>, PARLEY_SERVE_MODELS)', () => {
  let dir: string;
  let older: string;
  let newer: string;
  let serving: TestApp;
  const auth = { token: 'serve-secret' };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-serving-'));
    [older, newer] = (await trainMoodbot(['older', 'newer'], dir)) as [string, string];
    serving = await startTestApp({
      env: { PARLEY_SERVE_MODELS: 'true', PARLEY_MODEL: dir, PARLEY_AUTH_TOKEN: auth.token },
      withDomain: false,
    });
  }, 120_000);

  afterAll(async () => {
    await serving?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

  it('answers latest (newest trained_at) with the archive and its SHA-256 as ETag', async () => {
    const res = await request(serving.url)
      .get('/models/latest')
      .query(auth)
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(`"${sha(newer)}"`);
    expect(res.headers.filename).toBe(basename(newer));
    expect((res.body as Buffer).equals(readFileSync(newer))).toBe(true);
  });

  it('answers a model by name, and 304 when If-None-Match is its hash', async () => {
    const named = await request(serving.url).get('/models/older').query(auth);
    expect(named.status).toBe(200);
    expect(named.headers.etag).toBe(`"${sha(older)}"`);
    const again = await request(serving.url)
      .get(`/models/${basename(older)}`)
      .query(auth)
      .set('If-None-Match', named.headers.etag as string);
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
  });

  it('404 for unknown or hostile names; 401 without the token', async () => {
    for (const name of ['nope', '..%2F..%2Fetc%2Fpasswd', '.hidden']) {
      const res = await request(serving.url).get(`/models/${name}`).query(auth);
      expect(res.status).toBe(404);
    }
    const anonymous = await request(serving.url).get('/models/latest');
    expect(anonymous.status).toBe(401);
  });

  it('another Parley pulls from it at start (wait_time_between_pulls: null → once)', async () => {
    const endpoints = endpointsFile(
      dir,
      `models:\n  url: ${serving.url}/models/latest\n  token: ${auth.token}\n  wait_time_between_pulls: null\n`,
    );
    const puller = await startTestApp({ env: { PARLEY_ENDPOINTS: endpoints }, withDomain: false });
    try {
      const status = await request(puller.url).get('/status');
      expect(status.body.model_file).toBe(basename(newer));
      const servingStatus = await request(serving.url).get('/status').query(auth);
      expect(servingStatus.status).toBe(200);
    } finally {
      await puller.close();
    }
  });

  it('is off by default', async () => {
    const plain = await startTestApp({ env: { PARLEY_MODEL: dir }, withDomain: false });
    try {
      expect((await request(plain.url).get('/models/latest')).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
