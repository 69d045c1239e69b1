import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { trainModel } from 'src/cli/train.command';
import { type LoadedAssistant } from 'src/core';
import { loadModelArchive } from 'src/modules/model';
import request from 'supertest';
import { FIXTURES, startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

const MOODBOT = join(FIXTURES, 'moodbot');

describe('POST /model/parse', () => {
  let t: TestApp;
  let dir: string;
  let model: LoadedAssistant;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-parse-'));
    const trained = await trainModel(
      {
        data: [join(MOODBOT, 'data')],
        domain: join(MOODBOT, 'domain.yml'),
        config: join(MOODBOT, 'config.yml'),
        out: dir,
      },
      () => undefined,
    );
    model = await loadModelArchive(trained.path);
    t = await startTestApp({ withDomain: false });
  }, 120_000);

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => t.registry.unload());

  it('answers 409 Conflict without a model', async () => {
    const res = await request(t.url).post('/model/parse').send({ text: 'hello' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      status: 'failure',
      reason: 'Conflict',
      code: 409,
      message:
        'No agent loaded. To continue processing, a model of a trained agent needs to be loaded.',
    });
  });

  it('loads the archive into a LoadedAssistant with its NLU', () => {
    expect(model.modelFile).toMatch(/\.tar\.gz$/);
    expect(model.modelId).toMatch(/^[0-9a-f]{32}$/);
    expect(model.assistantId).toBe('parley_mood');
    expect(model.nlu?.componentNames).toContain('DIETClassifier');
    expect(model.domain.intents).toContain('greet');
  });

  it('parses with the loaded NLU, and /intent{...} bypasses it', async () => {
    t.registry.load(model);
    const res = await request(t.url)
      .post('/model/parse')
      .send({ text: 'I am sad', message_id: 'm1' });
    expect(res.status).toBe(200);
    expect(res.body.text).toBe('I am sad');
    expect(typeof res.body.intent.name).toBe('string');
    expect(res.body.intent_ranking.length).toBeGreaterThan(1);
    expect(res.body.text_tokens).toEqual([
      [0, 1],
      [2, 4],
      [5, 8],
    ]);

    const shortcut = await request(t.url)
      .post('/model/parse')
      .send({ text: '/mood_great{"name": "Ann"}' });
    expect(shortcut.status).toBe(200);
    expect(shortcut.body.intent).toEqual({ name: 'mood_great', confidence: 1 });
    expect(shortcut.body.entities[0]).toMatchObject({ entity: 'name', value: 'Ann' });
  });

  it('reads the body the same way whether sized, chunked or gzipped, and answers JSON bytes', async () => {
    t.registry.load(model);
    const payload = JSON.stringify({ text: 'I am sad' });
    const expected = JSON.stringify(model.nlu?.parse('I am sad'));
    const send = (headers: Record<string, string>, chunks: Buffer[]) =>
      new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>(
        (resolve, reject) => {
          const req = httpRequest(
            `${t.url}/model/parse`,
            { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, headers: res.headers, text }),
              );
            },
          );
          req.on('error', reject);
          for (const c of chunks) req.write(c);
          req.end();
        },
      );
    const bytes = Buffer.from(payload);
    const sized = await send({ 'Content-Length': String(bytes.length) }, [bytes]);
    const chunked = await send({ 'Transfer-Encoding': 'chunked' }, [
      bytes.subarray(0, 5),
      bytes.subarray(5),
    ]);
    const zipped = gzipSync(bytes);
    const gzipped = await send(
      { 'Content-Encoding': 'gzip', 'Content-Length': String(zipped.length) },
      [zipped],
    );
    for (const res of [sized, chunked, gzipped]) {
      expect(res.status).toBe(200);
      expect(res.text).toBe(expected);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(expected)));
      expect(res.headers['x-request-id']).toBeTruthy();
    }
    const broken = await send({ 'Content-Length': '9' }, [Buffer.from('{"text": ')]);
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text)).toMatchObject({ reason: 'BadRequest', code: 400 });
    const badZip = await send({ 'Content-Encoding': 'gzip', 'Content-Length': '4' }, [
      Buffer.from('nope'),
    ]);
    expect(badZip.status).toBe(400);
  });

  it.each([
    ['an empty body', {}, /No text message defined in request_body/],
    ['a missing text', { message_id: 'x' }, /'text' as a string/],
    ['a non-string text', { text: 42 }, /'text' as a string/],
  ])('answers 400 on %s', async (_what, body, message) => {
    t.registry.load(model);
    const res = await request(t.url).post('/model/parse').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'BadRequest', code: 400 });
    expect(res.body.message).toMatch(message);
  });

  it('validates emulation_mode and shapes the response like wit, luis and dialogflow', async () => {
    t.registry.load(model);
    const bad = await request(t.url).post('/model/parse?emulation_mode=alexa').send({ text: 'hi' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ parameter: 'emulation_mode', in: 'query' });
    const text = '/greet{"name": "Ann"}';
    const wit = await request(t.url).post('/model/parse?emulation_mode=WIT').send({ text });
    expect(wit.body).toMatchObject({
      text,
      intents: [{ name: 'greet', confidence: 1 }],
      entities: { 'name:name': [{ name: 'name', value: 'Ann', confidence: 1 }] },
    });
    const luis = await request(t.url).post('/model/parse?emulation_mode=luis').send({ text });
    expect(luis.body).toMatchObject({
      query: text,
      prediction: {
        topIntent: 'greet',
        intents: { greet: { score: 1 } },
        entities: { name: ['Ann'], $instance: { name: [{ type: 'name', text: 'Ann' }] } },
      },
    });
    const df = await request(t.url).post('/model/parse?emulation_mode=dialogflow').send({ text });
    expect(df.body.queryResult).toMatchObject({
      queryText: text,
      action: 'greet',
      parameters: { name: ['Ann'] },
      intent: { displayName: 'greet' },
      intentDetectionConfidence: 1,
    });
  });

  it('needs auth like every API route (401 before 409)', async () => {
    const secured = await startTestApp({ env: { PARLEY_AUTH_TOKEN: 's3cret' }, withDomain: false });
    try {
      expect((await request(secured.url).post('/model/parse').send({ text: 'x' })).status).toBe(
        401,
      );
      expect(
        (await request(secured.url).post('/model/parse?token=s3cret').send({ text: 'x' })).status,
      ).toBe(409);
    } finally {
      await secured.close();
    }
  });

  it('POST /conversations/{id}/messages parses with the loaded NLU', async () => {
    t.registry.load(model);
    const id = uniqueId('nlu');
    const res = await request(t.url)
      .post(`/conversations/${id}/messages`)
      .send({ text: 'I am sad', sender: 'user' });
    expect(res.status).toBe(200);
    const expected = model.nlu?.parse('I am sad');
    expect(res.body.latest_message.intent).toEqual(expected?.intent);
    expect(res.body.latest_message.entities).toEqual(expected?.entities);
    // Token offsets are answered by /model/parse but not stored with the user event.
    expect(expected?.text_tokens).toHaveLength(3);
    expect(res.body.latest_message).not.toHaveProperty('text_tokens');
  });
});
