import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainModel } from 'src/cli/train.command';
import { type LoadedAssistant } from 'src/core';
import { loadModelArchive } from 'src/modules/model';
import request from 'supertest';
import { FIXTURES, startTestApp, type TestApp } from 'test/utils/create-test-app';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'parley.js');
const MOODBOT = join(FIXTURES, 'moodbot');
const NLU = readFileSync(join(MOODBOT, 'data', 'nlu.yml'), 'utf8');
const YAML = 'application/x-yaml';
const CV_CONFIG =
  'language: en\npipeline:\n- name: WhitespaceTokenizer\n- name: CountVectorsFeaturizer\n- name: CountVectorsFeaturizer\n  analyzer: char_wb\n  min_ngram: 1\n  max_ngram: 4\n- name: DIETClassifier\n  epochs: 60\n  entity_recognition: false\n';

interface Received {
  body: Record<string, unknown>;
}

/** A local callback receiver on 127.0.0.1:0 that resolves each POSTed JSON body in turn. */
async function callbackServer(): Promise<{
  url: string;
  next(): Promise<Received>;
  close(): Promise<void>;
}> {
  const waiting: Array<(r: Received) => void> = [];
  const queued: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      res.writeHead(200).end();
      const r = { body: JSON.parse(data) as Record<string, unknown> };
      const w = waiting.shift();
      if (w) w(r);
      else queued.push(r);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/cb`,
    next: () => {
      const r = queued.shift();
      return r ? Promise.resolve(r) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('POST /model/test/intents and parley test/shell nlu', () => {
  let t: TestApp;
  let dir: string;
  let modelPath: string;
  let otherPath: string;
  let model: LoadedAssistant;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-evaluate-'));
    const config = join(dir, 'config.yml');
    writeFileSync(
      config,
      readFileSync(join(MOODBOT, 'config.yml'), 'utf8').replace(/epochs: 1\b/g, 'epochs: 60'),
    );
    const opts = {
      data: [join(MOODBOT, 'data')],
      domain: join(MOODBOT, 'domain.yml'),
      config,
      out: join(dir, 'models'),
    };
    modelPath = (await trainModel({ ...opts, fixedModelName: 'main' }, () => undefined)).path;
    otherPath = (
      await trainModel({ ...opts, fixedModelName: 'other', force: true }, () => undefined)
    ).path;
    model = await loadModelArchive(modelPath);
    t = await startTestApp({ withDomain: false });
  }, 180_000);

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => t.registry.unload());

  it('answers 409 without a model, 400 without a body or with a JSON body', async () => {
    const none = await request(t.url).post('/model/test/intents').type(YAML).send(NLU);
    expect(none.status).toBe(409);
    t.registry.load(model);
    const empty = await request(t.url).post('/model/test/intents');
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe(
      'You must provide some nlu data in the request body in order to evaluate your model.',
    );
    const json = await request(t.url).post('/model/test/intents').send({ nlu: [] });
    expect(json.status).toBe(400);
    const bad = await request(t.url)
      .post('/model/test/intents')
      .type(YAML)
      .send('nlu:\n- intent: greet\n  examples: |\n    - hi\n- intnt: x\n');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/request body:5/);
  });

  it('evaluates the moodbot NLU data against the loaded model', async () => {
    t.registry.load(model);
    const res = await request(t.url).post('/model/test/intents').type(YAML).send(NLU);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'entity_evaluation',
      'intent_evaluation',
      'response_selection_evaluation',
    ]);
    const intents = res.body.intent_evaluation;
    expect(intents.accuracy).toBeGreaterThan(0.9);
    expect(typeof intents.f1_score).toBe('number');
    expect(typeof intents.precision).toBe('number');
    expect(intents.predictions).toHaveLength(76);
    expect(Array.isArray(intents.errors)).toBe(true);
    const report = intents.report as Record<string, unknown>;
    // sklearn: `accuracy` when the labels cover every prediction, else `micro avg`.
    expect('accuracy' in report || 'micro avg' in report).toBe(true);
    for (const key of ['macro avg', 'weighted avg', 'greet', 'mood_unhappy']) {
      expect(report[key]).toMatchObject({
        precision: expect.any(Number),
        recall: expect.any(Number),
        'f1-score': expect.any(Number),
        support: expect.any(Number),
      });
    }
    expect((report.greet as { support: number }).support).toBe(13);
  });

  it('evaluates another archive with ?model= and leaves the served model alone', async () => {
    t.registry.load(model);
    const before = (await request(t.url).get('/status')).body.model_file;
    expect(before).toBe('main.tar.gz');
    const res = await request(t.url)
      .post('/model/test/intents')
      .query({ model: otherPath })
      .type(YAML)
      .send(NLU);
    expect(res.status).toBe(200);
    expect(res.body.intent_evaluation.accuracy).toBeGreaterThan(0.9);
    expect((await request(t.url).get('/status')).body.model_file).toBe(before);

    const missing = await request(t.url)
      .post('/model/test/intents')
      .query({ model: 'missing.tar.gz' })
      .type(YAML)
      .send(NLU);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ status: 'failure', code: 400 });
    expect(missing.body.message).toContain('missing.tar.gz');
    expect((await request(t.url).get('/status')).body.model_file).toBe(before);
  });

  it('cross-validates with cross_validation_folds=3 (no model needed), f1_score computed', async () => {
    const res = await request(t.url)
      .post('/model/test/intents')
      .query({ cross_validation_folds: '3' })
      .type(YAML)
      .send(`${CV_CONFIG}${NLU}`);
    expect(res.status).toBe(200);
    const intents = res.body.intent_evaluation;
    expect(typeof intents.f1_score).toBe('number');
    expect(intents.f1_score).toBeGreaterThan(0.5);
    expect(intents.predictions).toHaveLength(76);
    expect(intents.report['weighted avg']['f1-score']).toBeCloseTo(intents.f1_score, 10);
    for (const key of ['precision', 'f1_score', 'report', 'errors']) {
      expect(intents).toHaveProperty(key);
    }

    const bad = await request(t.url)
      .post('/model/test/intents')
      .query({ cross_validation_folds: '1' })
      .type(YAML)
      .send(`${CV_CONFIG}${NLU}`);
    expect(bad.status).toBe(400);
    const noConfig = await request(t.url)
      .post('/model/test/intents')
      .query({ cross_validation_folds: '3' })
      .type(YAML)
      .send(NLU);
    expect(noConfig.status).toBe(400);
    expect(noConfig.body.message).toContain('pipeline');
  }, 120_000);

  it('answers 204 with callback_url and POSTs the result, or a failure with its code', async () => {
    const cb = await callbackServer();
    try {
      t.registry.load(model);
      const res = await request(t.url)
        .post('/model/test/intents')
        .query({ callback_url: cb.url })
        .type(YAML)
        .send(NLU);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const result = await cb.next();
      expect(Object.keys(result.body).sort()).toEqual([
        'entity_evaluation',
        'intent_evaluation',
        'response_selection_evaluation',
      ]);

      const failing = await request(t.url)
        .post('/model/test/intents')
        .query({ callback_url: cb.url, cross_validation_folds: '3' })
        .type(YAML)
        .send(`language: en\npipeline:\n- name: NoSuchComponent\n${NLU}`);
      expect(failing.status).toBe(204);
      const failure = await cb.next();
      expect(failure.body).toMatchObject({ status: 'failure', code: 400 });
      expect(failure.body.message).toContain('NoSuchComponent');
    } finally {
      await cb.close();
    }
  });

  it('`parley test nlu` and `parley test core` write their reports', () => {
    const out = join(dir, 'results');
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        'test',
        'nlu',
        '--model',
        modelPath,
        '--nlu',
        join(MOODBOT, 'data', 'nlu.yml'),
        '--out',
        out,
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, LOG_LEVEL: 'silent' },
      },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Intent evaluation: accuracy 0\.9\d\d|accuracy 1\.000/);
    expect(existsSync(join(out, 'intent_report.json'))).toBe(true);
    const errors = JSON.parse(readFileSync(join(out, 'intent_errors.json'), 'utf8')) as unknown[];
    expect(Array.isArray(errors)).toBe(true);
    const report = JSON.parse(readFileSync(join(out, 'intent_report.json'), 'utf8'));
    expect(report['weighted avg']).toHaveProperty('f1-score');

    // The model was trained on the moodbot's stories and rules too: `test core` replays its tests.
    const coreOut = join(dir, 'core-results');
    const core = spawnSync(
      process.execPath,
      [
        BIN,
        'test',
        'core',
        '--model',
        modelPath,
        '--stories',
        join(MOODBOT, 'tests'),
        '--out',
        coreOut,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(core.status).toBe(0);
    expect(core.stdout).toContain('Conversation accuracy: 1 (7/7 stories)');
    const storyReport = JSON.parse(readFileSync(join(coreOut, 'story_report.json'), 'utf8'));
    expect(storyReport.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 7,
      with_warnings: 0,
      total: 7,
    });
    expect(readFileSync(join(coreOut, 'failed_test_stories.yml'), 'utf8')).toContain('all good');
  });

  it('`parley shell nlu` parses piped lines and exits at end of input', () => {
    const r = spawnSync(process.execPath, [BIN, 'shell', 'nlu', '--model', modelPath], {
      cwd: ROOT,
      encoding: 'utf8',
      input: 'hello\n',
      timeout: 60_000,
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    expect(r.status).toBe(0);
    const parsed = JSON.parse(r.stdout) as { text: string; intent: { name: string } };
    expect(parsed.text).toBe('hello');
    expect(parsed.intent.name).toBe('greet');
  });
});
