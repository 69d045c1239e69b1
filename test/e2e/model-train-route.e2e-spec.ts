import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelArchive } from 'src/core/model-archive';
import { MINIMUM_COMPATIBLE_VERSION, PARLEY_VERSION } from 'src/platform/config/version';
import request from 'supertest';
import { FIXTURES, startTestApp, type TestApp } from 'test/utils/create-test-app';
import { parse, stringify } from 'yaml';

const MOODBOT = join(FIXTURES, 'moodbot');

/** The moodbot as one training document: domain + config (DIET 60 epochs) + nlu/stories/rules. */
function moodbotDocument(): string {
  const merged: Record<string, unknown> = {};
  const files = ['domain.yml', 'config.yml', 'data/nlu.yml', 'data/rules.yml', 'data/stories.yml'];
  for (const file of files) {
    let text = readFileSync(join(MOODBOT, file), 'utf8');
    if (file === 'config.yml') text = text.replace(/epochs: 1\b/g, 'epochs: 60');
    const doc = parse(text) as Record<string, unknown>;
    delete doc.version;
    Object.assign(merged, doc);
  }
  return stringify({ version: '3.1', ...merged });
}

/** A tiny, quick dataset. */
const SMALL = `version: "3.1"
assistant_id: small_bot
language: en
pipeline:
  - name: WhitespaceTokenizer
  - name: CountVectorsFeaturizer
  - name: DIETClassifier
    epochs: 1
intents:
  - greet
  - goodbye
responses:
  utter_greet:
    - text: Hi!
nlu:
  - intent: greet
    examples: |
      - hello
      - hi
  - intent: goodbye
    examples: |
      - bye
      - see you
`;

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local HTTP server on 127.0.0.1:0 that records every POST. */
async function callbackServer(): Promise<{
  url: string;
  next: () => Promise<Received>;
  close: () => Promise<void>;
}> {
  const queue: Received[] = [];
  const waiters: ((r: Received) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks) };
      const waiter = waiters.shift();
      if (waiter) waiter(received);
      else queue.push(received);
      res.statusCode = 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const ready = queue.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiters.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function binary(res: request.Response, callback: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
}

describe('POST /model/train', () => {
  let t: TestApp;
  let dir: string;
  let models: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-train-route-'));
    models = join(dir, 'models');
    mkdirSync(models);
    t = await startTestApp({ env: { PARLEY_MODEL: models } });
  });

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('trains the moodbot from one YAML document; the archive loads and parses "hello" as greet', async () => {
    const res = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send(moodbotDocument())
      .buffer(true)
      .parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/gzip/);
    const filename = res.headers.filename as string;
    expect(filename).toMatch(/^\d{8}-\d{6}-[a-z]+-[a-z]+\.tar\.gz$/);
    const bytes = res.body as Buffer;
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // Saved in the --model directory, and not loaded.
    expect(readdirSync(models)).toEqual([filename]);
    const status = await request(t.url).get('/status');
    expect(status.body.model_file).toBe('20261121-101500-brisk-crab.tar.gz');

    const path = join(dir, filename);
    writeFileSync(path, bytes);
    const archive = await readModelArchive(path, {
      parleyVersion: PARLEY_VERSION,
      minimumCompatibleVersion: MINIMUM_COMPATIBLE_VERSION,
    });
    expect(archive.manifest.assistant_id).toBe('parley_mood');
    expect(archive.manifest.components).toContain('DIETClassifier');
    // The document holds stories and rules too: the dialogue policies are trained with the NLU.
    expect([...archive.files.keys()].sort()).toEqual([
      'config.yml',
      'core/policies.json',
      'domain.yml',
      'nlu/model.json',
      'nlu/phrases.json',
    ]);
    expect(archive.files.get('domain.yml')?.toString()).toContain('utter_greet');

    const load = await request(t.url).put('/model').send({ model_file: path });
    expect(load.status).toBe(204);
    const parsed = await request(t.url).post('/model/parse').send({ text: 'hello' });
    expect(parsed.status).toBe(200);
    expect(parsed.body.intent.name).toBe('greet');
  }, 180_000);

  it('writes to a temporary directory with save_to_default_model_directory=false', async () => {
    const before = readdirSync(models).length;
    const res = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false&augmentation=x&num_threads=2')
      .set('Content-Type', 'application/x-yaml')
      .send(SMALL)
      .buffer(true)
      .parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers.filename).toMatch(/\.tar\.gz$/);
    expect(readdirSync(models)).toHaveLength(before);
  }, 60_000);

  it('answers 400 for invalid YAML, naming the line', async () => {
    const res = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send('nlu:\n  - intent: greet\n    examples: [\n');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'BadRequest', code: 400 });
    expect(res.body.message).toMatch(/^The request body does not contain valid YAML\. Error: /);
    expect(res.body.message).toMatch(/request body:\d+/);
  });

  it('answers 400 for bad NLU data with its line, and for an invalid domain', async () => {
    const bad = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send('language: en\nnlu:\n- intent: greet\n  examples: |\n    - hi\n- intnt: bye\n');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('request body:6');

    const domain = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send(`${SMALL}slots: 3\n`);
    expect(domain.status).toBe(400);
    expect(domain.body.reason).toBe('InvalidDomainError');
    expect(domain.body.message).toMatch(/^Provided domain file is invalid\./);
  });

  it('refuses YAML bombs', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    ].join('\n');
    const res = await request(t.url)
      .post('/model/train')
      .set('Content-Type', 'application/x-yaml')
      .send(bomb);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/alias/i);
  });

  it('answers 400 for a JSON body and for no body', async () => {
    const json = await request(t.url).post('/model/train').send({ nlu: [] });
    expect(json.status).toBe(400);
    expect(json.body.message).toContain('JSON training payloads are no longer supported');

    const empty = await request(t.url).post('/model/train');
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe(
      'You must provide training data in the request body in order to train your model.',
    );
  });

  it('with callback_url answers 204, counts the job in /status, then POSTs the archive', async () => {
    const cb = await callbackServer();
    try {
      const before = await request(t.url).get('/status');
      expect(before.body.num_active_training_jobs).toBe(0);
      const res = await request(t.url)
        .post(
          `/model/train?force_training=true&save_to_default_model_directory=false&callback_url=${encodeURIComponent(cb.url)}`,
        )
        .set('Content-Type', 'application/x-yaml')
        .send(moodbotDocument());
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const during = await request(t.url).get('/status');
      expect(during.body.num_active_training_jobs).toBe(1);

      const received = await cb.next();
      expect(received.headers['content-type']).toBe('application/gzip');
      expect(received.headers.filename).toMatch(/\.tar\.gz$/);
      expect(received.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      const after = await request(t.url).get('/status');
      expect(after.body.num_active_training_jobs).toBe(0);
    } finally {
      await cb.close();
    }
  }, 180_000);

  it('with callback_url delivers a failure body when training fails', async () => {
    const cb = await callbackServer();
    try {
      const res = await request(t.url)
        .post(`/model/train?callback_url=${encodeURIComponent(cb.url)}`)
        .set('Content-Type', 'application/x-yaml')
        .send('nlu:\n- intnt: greet\n');
      expect(res.status).toBe(204);
      const received = await cb.next();
      expect(received.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(received.body.toString('utf8')) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 'failure', code: 400, reason: 'BadRequest' });
      expect(body.message).toContain('request body:2');
    } finally {
      await cb.close();
    }
  }, 60_000);

  it('requires authentication when a token is set', async () => {
    const secured = await startTestApp({ env: { PARLEY_AUTH_TOKEN: 'secret' } });
    try {
      const res = await request(secured.url)
        .post('/model/train')
        .set('Content-Type', 'application/x-yaml')
        .send(SMALL);
      expect(res.status).toBe(401);
    } finally {
      await secured.close();
    }
  });
});
