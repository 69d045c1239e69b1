import { sign } from 'jsonwebtoken';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { trainModel } from 'src/cli/train.command';
import { DEFAULT_FETCH_LIMITS, ModelStore } from 'src/modules/model';
import request from 'supertest';
import { Header } from 'tar';
import { FIXTURES, startTestApp, testDomain, type TestApp } from 'test/utils/create-test-app';
import { parse as parseYaml } from 'yaml';

const MOODBOT = join(FIXTURES, 'moodbot');
const TEST_MODEL_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

/** A gzipped tar whose only member escapes the extraction directory (`../evil.txt`). */
function traversalArchive(): Buffer {
  const data = Buffer.from('pwned\n');
  const header = Buffer.alloc(512);
  new Header({
    path: '../evil.txt',
    mode: 0o644,
    size: data.length,
    type: 'File',
    mtime: new Date(0),
    uid: 0,
    gid: 0,
  }).encode(header, 0);
  const padded = Buffer.alloc(Math.ceil(data.length / 512) * 512);
  data.copy(padded);
  return gzipSync(Buffer.concat([header, padded, Buffer.alloc(1024)]));
}

interface ModelServer {
  url: string;
  requests: Array<{ url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** A model server on 127.0.0.1:0 answering every GET with `body` and `headers`. */
async function modelServer(
  body: Buffer,
  headers: Record<string, string>,
  status = 200,
): Promise<ModelServer> {
  const requests: ModelServer['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(status, { 'Content-Type': 'application/gzip', ...headers });
    res.end(status === 200 ? body : undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/models/latest`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('model management routes (PUT/DELETE /model, GET /domain, GET /license)', () => {
  let t: TestApp;
  let dir: string;
  let archive: string;
  let trainedId: string;

  const loadTestDomain = () =>
    t.registry.load({
      domain: testDomain(),
      modelId: TEST_MODEL_ID,
      modelFile: '20261121-101500-brisk-crab.tar.gz',
      assistantId: 'test_assistant',
    });

  /** The old model still answers: /status shows it and /model/parse works. */
  async function expectTestDomainServing(): Promise<void> {
    const status = await request(t.url).get('/status');
    expect(status.status).toBe(200);
    expect(status.body.model_id).toBe(TEST_MODEL_ID);
    const parse = await request(t.url).post('/model/parse').send({ text: '/greet' });
    expect(parse.status).toBe(200);
    expect(parse.body.intent).toEqual({ name: 'greet', confidence: 1 });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-model-routes-'));
    const trained = await trainModel(
      {
        data: [join(MOODBOT, 'data')],
        domain: join(MOODBOT, 'domain.yml'),
        config: join(MOODBOT, 'config.yml'),
        out: join(dir, 'models'),
      },
      () => undefined,
    );
    archive = trained.path;
    t = await startTestApp({ withDomain: false });
    const status = await request(t.url).put('/model').send({ model_file: archive });
    expect(status.status).toBe(204);
    trainedId = (await request(t.url).get('/status')).body.model_id as string;
  }, 120_000);

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => loadTestDomain());

  describe('PUT /model', () => {
    it('loads a model_file: 204, no body, and /status shows the new model', async () => {
      const res = await request(t.url).put('/model').send({ model_file: archive });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const status = await request(t.url).get('/status');
      expect(status.body).toMatchObject({ model_file: basename(archive) });
      expect(status.body.model_id).toMatch(/^[0-9a-f]{32}$/);
      expect(status.body.model_id).not.toBe(TEST_MODEL_ID);
      expect(status.body.model_id).toBe(trainedId);
      const parse = await request(t.url).post('/model/parse').send({ text: 'I am sad' });
      expect(parse.status).toBe(200);
      expect(parse.body.intent_ranking.length).toBeGreaterThan(1);
    });

    it('loads the newest archive of a directory', async () => {
      const res = await request(t.url)
        .put('/model')
        .send({ model_file: join(dir, 'models') });
      expect(res.status).toBe(204);
      expect((await request(t.url).get('/status')).body.model_file).toBe(basename(archive));
    });

    it.each([
      ['no body', undefined],
      ['an empty object', {}],
      ['only unknown keys', { model: 'x' }],
    ])('answers 400 BadRequest on %s', async (_what, body) => {
      const req = request(t.url).put('/model');
      const res = body === undefined ? await req : await req.send(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        status: 'failure',
        reason: 'BadRequest',
        code: 400,
        message: 'No path to model file defined in request_body.',
      });
      await expectTestDomainServing();
    });

    it('answers 400 on a path that does not exist and keeps the old model', async () => {
      const res = await request(t.url)
        .put('/model')
        .send({ model_file: join(dir, 'some-random-path.tar.gz') });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400 });
      expect(res.body.message).toMatch(/could not be loaded: no model archive at that path/);
      await expectTestDomainServing();
    });

    it('answers 400 LoadingError on a path-traversal archive and keeps the old model', async () => {
      const evil = join(dir, 'evil.tar.gz');
      writeFileSync(evil, traversalArchive());
      const res = await request(t.url).put('/model').send({ model_file: evil });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ reason: 'LoadingError', code: 400 });
      expect(res.body.details.reason).toBe('path_traversal');
      expect(res.body.message).toMatch(/\.\.\/evil\.txt/);
      await expectTestDomainServing();
    });

    it('answers 400 on a non-string model_file', async () => {
      const res = await request(t.url).put('/model').send({ model_file: 42 });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ parameter: 'model_file', in: 'body' });
      await expectTestDomainServing();
    });

    it.each([
      ['not an object', 'http://x'],
      ['no url', { params: {} }],
      ['a non-http url', { url: 'ftp://127.0.0.1/model' }],
      ['an unparsable url', { url: 'not a url' }],
      ['params not an object', { url: 'http://127.0.0.1/m', params: [1] }],
      ['headers not an object', { url: 'http://127.0.0.1/m', headers: 'x' }],
      ['basic_auth without password', { url: 'http://127.0.0.1/m', basic_auth: { username: 'u' } }],
      ['a non-string token', { url: 'http://127.0.0.1/m', token: 1 }],
      ['a non-string token_name', { url: 'http://127.0.0.1/m', token_name: {} }],
      ['a string wait time', { url: 'http://127.0.0.1/m', wait_time_between_pulls: '10' }],
    ])('answers 400 on a malformed model_server (%s)', async (_what, modelServer) => {
      const res = await request(t.url).put('/model').send({ model_server: modelServer });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400 });
      expect(res.body.message).toMatch(/^Supplied 'model_server' is not valid\. Error: /);
      expect(res.body.details).toEqual({ parameter: 'model_server', in: 'body' });
      await expectTestDomainServing();
    });

    it('pulls from a model server (200 + ETag): 204 and the new model', async () => {
      const server = await modelServer(readFileSync(archive), {
        ETag: '"abc123"',
        filename: 'pulled-model.tar.gz',
      });
      try {
        const res = await request(t.url)
          .put('/model')
          .send({
            model_server: {
              url: server.url,
              params: { env: 'prod' },
              headers: { 'X-Extra': 'yes' },
              basic_auth: { username: 'ann', password: 'pw' },
              token: 't0k',
              token_name: 'key',
              wait_time_between_pulls: null,
              custom_kwarg: true,
            },
          });
        expect(res.status).toBe(204);
        const status = await request(t.url).get('/status');
        expect(status.body).toMatchObject({
          model_id: trainedId,
          model_file: 'pulled-model.tar.gz',
        });
        expect(server.requests).toHaveLength(1);
        const seen = server.requests[0]!;
        const query = new URL(seen.url, 'http://x').searchParams;
        expect(query.get('env')).toBe('prod');
        expect(query.get('key')).toBe('t0k');
        expect(seen.headers['x-extra']).toBe('yes');
        expect(seen.headers.authorization).toBe(
          `Basic ${Buffer.from('ann:pw').toString('base64')}`,
        );
        expect(seen.headers['if-none-match']).toMatch(/^[0-9a-f]{32}$/);

        // The next pull sends the ETag of the served model.
        const again = await request(t.url)
          .put('/model')
          .send({ model_server: { url: server.url } });
        expect(again.status).toBe(204);
        expect(server.requests[1]!.headers['if-none-match']).toBe('"abc123"');
      } finally {
        await server.close();
      }
    });

    it('answers 400 when the model server sends no ETag, and keeps the old model', async () => {
      const server = await modelServer(readFileSync(archive), {});
      try {
        // The failure names the server without the credentials in its URL.
        const withSecrets = new URL(server.url);
        withSecrets.username = 'ann';
        withSecrets.password = 'userinfo-secret';
        withSecrets.searchParams.set('token', 'query-secret');
        const secret = await request(t.url)
          .put('/model')
          .send({ model_server: { url: withSecrets.toString() } });
        expect(secret.status).toBe(400);
        expect(JSON.stringify(secret.body)).not.toMatch(/userinfo-secret|query-secret/);
        expect(secret.body.details.url).toContain(withSecrets.host);

        const res = await request(t.url)
          .put('/model')
          .send({ model_server: { url: server.url } });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ reason: 'LoadingError', code: 400 });
        expect(res.body.message).toMatch(/without an ETag/);
        await expectTestDomainServing();
      } finally {
        await server.close();
      }
    });

    it('answers 400 when the model server answers 304 or sends a bad archive', async () => {
      const notModified = await modelServer(Buffer.alloc(0), { ETag: '"x"' }, 304);
      const bad = await modelServer(traversalArchive(), { ETag: '"evil"' });
      try {
        const a = await request(t.url)
          .put('/model')
          .send({ model_server: { url: notModified.url } });
        expect(a.status).toBe(400);
        expect(a.body.message).toMatch(/answered 304/);
        const b = await request(t.url)
          .put('/model')
          .send({ model_server: { url: bad.url } });
        expect(b.status).toBe(400);
        expect(b.body).toMatchObject({ reason: 'LoadingError' });
        expect(b.body.details.reason).toBe('path_traversal');
        await expectTestDomainServing();
      } finally {
        await notModified.close();
        await bad.close();
      }
    });

    it('answers 400 when the model server cannot be reached', async () => {
      const server = await modelServer(Buffer.alloc(0), {});
      await server.close();
      const res = await request(t.url)
        .put('/model')
        .send({ model_server: { url: server.url } });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/Could not fetch the model from the model server/);
      await expectTestDomainServing();
    });

    it('caps the download size and the wait for the model server', async () => {
      const admin = t.app.get(ModelStore);
      const big = await modelServer(readFileSync(archive), { ETag: '"big"' });
      const silent: Server = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const address = silent.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      try {
        admin.fetchLimits = { timeoutMs: 30_000, maxBytes: 1000 };
        const tooBig = await request(t.url)
          .put('/model')
          .send({ model_server: { url: big.url } });
        expect(tooBig.status).toBe(400);
        expect(tooBig.body.message).toMatch(/larger than 1000 bytes/);
        admin.fetchLimits = { timeoutMs: 200, maxBytes: DEFAULT_FETCH_LIMITS.maxBytes };
        const slow = await request(t.url)
          .put('/model')
          .send({ model_server: { url: `http://127.0.0.1:${port}/m` } });
        expect(slow.status).toBe(400);
        expect(slow.body.message).toMatch(/no answer within 0\.2 s/);
        await expectTestDomainServing();
      } finally {
        admin.fetchLimits = DEFAULT_FETCH_LIMITS;
        await big.close();
        silent.closeAllConnections();
        await new Promise((resolve) => silent.close(resolve));
      }
    });

    it('prefers an existing model_file over model_server', async () => {
      const server = await modelServer(Buffer.alloc(0), {});
      try {
        const res = await request(t.url)
          .put('/model')
          .send({ model_file: archive, model_server: { url: server.url } });
        expect(res.status).toBe(204);
        expect(server.requests).toHaveLength(0);
      } finally {
        await server.close();
      }
    });

    it('answers 400 on remote_storage aws without configuration, naming what is missing', async () => {
      const res = await request(t.url)
        .put('/model')
        .send({ model_file: 'model.tar.gz', remote_storage: 'aws' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400 });
      expect(res.body.message).toMatch(/Remote storage 'aws' is not configured: set BUCKET_NAME/);
      expect(res.body.details).toMatchObject({ parameter: 'remote_storage', in: 'body' });
      expect(res.body.details.missing).toContain('BUCKET_NAME');
      await expectTestDomainServing();
    });

    it.each([
      ['gcs', /Remote storage 'gcs' is not available.*GOOGLE_APPLICATION_CREDENTIALS/],
      ['azure', /Remote storage 'azure' is not available.*AZURE_CONTAINER/],
      ['nomodule.Persistor', /Custom persistor 'nomodule.Persistor': no module nomodule\.js/],
    ])(
      'answers 400 on remote_storage %s, naming the missing configuration',
      async (kind, message) => {
        const res = await request(t.url)
          .put('/model')
          .send({ model_file: 'model.tar.gz', remote_storage: kind });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ reason: 'BadRequest', code: 400 });
        expect(res.body.message).toMatch(message);
        await expectTestDomainServing();
      },
    );

    it('answers 400 on remote_storage without a model name, and on a bad kind', async () => {
      const noName = await request(t.url).put('/model').send({ remote_storage: 'aws' });
      expect(noName.status).toBe(400);
      expect(noName.body.message).toMatch(/needs the model's name in 'model_file'/);
      const bad = await request(t.url)
        .put('/model')
        .send({ model_file: 'm', remote_storage: '../etc/passwd' });
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual({ parameter: 'remote_storage', in: 'body' });
      await expectTestDomainServing();
    });
  });

  describe('DELETE /model', () => {
    it('answers 204; then model routes answer 409', async () => {
      const res = await request(t.url).delete('/model');
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const status = await request(t.url).get('/status');
      expect(status.status).toBe(409);
      expect(status.body).toMatchObject({ reason: 'Conflict', code: 409 });
      expect((await request(t.url).post('/model/parse').send({ text: 'hi' })).status).toBe(409);
      expect((await request(t.url).get('/domain').set('Accept', 'application/json')).status).toBe(
        409,
      );
      // Unloading twice is fine; loading again works.
      expect((await request(t.url).delete('/model')).status).toBe(204);
      expect((await request(t.url).put('/model').send({ model_file: archive })).status).toBe(204);
      expect((await request(t.url).get('/status')).body.model_id).toBe(trainedId);
    });
  });

  describe('GET /domain', () => {
    it('answers JSON for Accept: application/json, with every key of the domain', async () => {
      const res = await request(t.url).get('/domain').set('Accept', 'application/json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual(testDomain().toJSON());
      for (const key of ['version', 'intents', 'entities', 'slots', 'responses', 'actions']) {
        expect(res.body).toHaveProperty(key);
      }
      expect(res.body).toMatchObject({ session_config: {}, config: {} });
    });

    it('answers JSON when Accept is absent (Rasa defaults it to application/json)', async () => {
      const res = await request(t.url).get('/domain').unset('Accept');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(testDomain().toJSON());
    });

    it.each(['application/x-yaml', 'application/x-yml', 'application/yaml', 'text/yaml'])(
      'answers YAML for Accept: %s',
      async (accept) => {
        const res = await request(t.url).get('/domain').set('Accept', accept);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^application\/x-yaml/);
        expect(parseYaml(res.text)).toEqual(testDomain().toJSON());
      },
    );

    it.each(['*/*', 'text/html', 'application/json; charset=utf-8'])(
      'answers 406 NotAcceptable for Accept: %s',
      async (accept) => {
        const res = await request(t.url).get('/domain').set('Accept', accept);
        expect(res.status).toBe(406);
        expect(res.body).toMatchObject({
          status: 'failure',
          reason: 'NotAcceptable',
          code: 406,
        });
        expect(res.body.message).toMatch(/^Invalid Accept header\. Domain can be provided as json/);
      },
    );

    it('answers 409 without a model', async () => {
      t.registry.unload();
      const res = await request(t.url).get('/domain').set('Accept', 'application/json');
      expect(res.status).toBe(409);
    });
  });

  describe('auth', () => {
    it('PUT/DELETE /model and GET /domain need auth; GET /license does not', async () => {
      const secured = await startTestApp({ env: { PARLEY_AUTH_TOKEN: 's3cret' } });
      try {
        expect(
          (await request(secured.url).put('/model').send({ model_file: archive })).status,
        ).toBe(401);
        expect((await request(secured.url).delete('/model')).status).toBe(401);
        expect((await request(secured.url).get('/domain')).status).toBe(401);
        expect((await request(secured.url).get('/license')).status).toBe(200);
        expect(
          (await request(secured.url).put('/model?token=s3cret').send({ model_file: archive }))
            .status,
        ).toBe(204);
      } finally {
        await secured.close();
      }
    });
  });

  describe('GET /license', () => {
    it('answers the open-source record by default', async () => {
      const res = await request(t.url).get('/license');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: null,
        company: null,
        scope: null,
        email: null,
        expires: null,
      });
    });

    it('decodes PARLEY_LICENSE, also without --enable-api', async () => {
      const token = sign(
        {
          jti: 'lic-0001',
          company: 'acme',
          scope: 'rasa:pro rasa:voice',
          email: 'acme@email.com',
          exp: Date.UTC(2026, 0, 1) / 1000,
        },
        'vendor-secret-we-do-not-know',
      );
      const app = await startTestApp({
        env: { PARLEY_LICENSE: token, PARLEY_ENABLE_API: 'false' },
        withDomain: false,
      });
      try {
        const res = await request(app.url).get('/license');
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          id: 'lic-0001',
          company: 'acme',
          scope: 'rasa:pro rasa:voice',
          email: 'acme@email.com',
          expires: '2026-01-01T00:00:00+00:00',
        });
        expect((await request(app.url).put('/model').send({ model_file: archive })).status).toBe(
          404,
        );
      } finally {
        await app.close();
      }
    });

    it('refuses a PARLEY_LICENSE that is not a JWT at start', async () => {
      await expect(startTestApp({ env: { PARLEY_LICENSE: 'not-a-jwt' } })).rejects.toThrow(
        /PARLEY_LICENSE/,
      );
    });
  });

  it('answers 400 for a directory without an archive, keeping the old model', async () => {
    mkdirSync(join(dir, 'empty'));
    const res = await request(t.url)
      .put('/model')
      .send({ model_file: join(dir, 'empty') });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/no model archive at that path/);
    await expectTestDomainServing();
  });
});
