import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testCore } from 'src/cli/dialogue.command';
import { trainModel } from 'src/cli/train.command';
import { type LoadedAssistant } from 'src/core';
import { loadModelArchive } from 'src/modules/model';
import request from 'supertest';
import { sayRestTexts } from 'test/utils/bots';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';

/**
 * A small pizza-and-reminder bot whose config has Rasa's DucklingEntityExtractor and
 * SpacyEntityExtractor: once with the built-in extractors, once with a Duckling server (a fake
 * one on loopback, answering as Duckling's HTTP API does). Over HTTP, `POST /model/parse`
 * answers their entities and a conversation fills slots from them.
 */

const DOMAIN = `version: "3.1"
intents: [greet, order, remind]
entities: [number, time, PERSON]
slots:
  count:
    type: float
    mappings:
      - type: from_entity
        entity: number
  when:
    type: any
    mappings:
      - type: from_entity
        entity: time
  person:
    type: text
    mappings:
      - type: from_entity
        entity: PERSON
responses:
  utter_greet:
    - text: "Hi!"
  utter_order:
    - text: "{count} pizzas coming."
  utter_ask_count:
    - text: "How many pizzas?"
  utter_remind:
    - text: "Reminder set for {when}."
`;

const NLU = `version: "3.1"
nlu:
- intent: greet
  examples: |
    - hello
    - hi
    - hey there
- intent: order
  examples: |
    - I want 3 pizzas
    - order two pizzas
    - pizza please
    - can I get 5 pizzas
- intent: remind
  examples: |
    - remind me tomorrow at 5pm
    - remind me in 10 minutes
    - set a reminder for monday
`;

const RULES = `version: "3.1"
rules:
- rule: greet
  steps:
  - intent: greet
  - action: utter_greet
- rule: order, with a number
  steps:
  - intent: order
    entities:
    - number
  - action: utter_order
- rule: order, no number
  steps:
  - intent: order
  - action: utter_ask_count
- rule: remind
  steps:
  - intent: remind
  - action: utter_remind
`;

function config(duckling: string): string {
  return `recipe: default.v1
assistant_id: pizza_bot
language: en
pipeline:
  - name: WhitespaceTokenizer
  - name: CountVectorsFeaturizer
  - name: CountVectorsFeaturizer
    analyzer: char_wb
    min_ngram: 1
    max_ngram: 4
  - name: DIETClassifier
    epochs: 40
    entity_recognition: false
${duckling}
  - name: SpacyEntityExtractor
    dimensions: [PERSON]
policies:
  - name: RulePolicy
`;
}

async function trainBot(dir: string, name: string, duckling: string): Promise<LoadedAssistant> {
  const bot = join(dir, name);
  mkdirSync(join(bot, 'data'), { recursive: true });
  writeFileSync(join(bot, 'domain.yml'), DOMAIN);
  writeFileSync(join(bot, 'data', 'nlu.yml'), NLU);
  writeFileSync(join(bot, 'data', 'rules.yml'), RULES);
  writeFileSync(join(bot, 'config.yml'), config(duckling));
  const trained = await trainModel(
    {
      data: [join(bot, 'data')],
      domain: join(bot, 'domain.yml'),
      config: join(bot, 'config.yml'),
      out: join(bot, 'models'),
    },
    () => undefined,
  );
  modelPaths.set(name, trained.path);
  return loadModelArchive(trained.path);
}

/** The archive each trained bot was saved to, by name. */
const modelPaths = new Map<string, string>();

describe('DucklingEntityExtractor and SpacyEntityExtractor over HTTP', () => {
  let t: TestApp;
  let dir: string;
  let builtin: LoadedAssistant;
  let served: LoadedAssistant;
  let duckling: Server;
  const forms: URLSearchParams[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-extractors-'));
    // Duckling's HTTP API: POST /parse with a form; a JSON list of results. This one reads
    // numbers written in digits and "at <n>pm".
    duckling = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        forms.push(form);
        const text = form.get('text') ?? '';
        const out: unknown[] = [];
        const pm = /at (\d{1,2})pm/.exec(text);
        if (pm) {
          const hour = Number(pm[1]) + 12;
          const value = `2030-01-02T${hour}:00:00.000-08:00`;
          out.push({
            body: pm[0],
            start: pm.index,
            end: pm.index + pm[0].length,
            dim: 'time',
            latent: false,
            value: {
              values: [{ value, grain: 'hour', type: 'value' }],
              value,
              grain: 'hour',
              type: 'value',
            },
          });
        }
        for (const m of text.matchAll(/\b\d+\b(?!pm)/g)) {
          out.push({
            body: m[0],
            start: m.index,
            end: m.index + m[0].length,
            dim: 'number',
            latent: false,
            value: { value: Number(m[0]), type: 'value' },
          });
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(out));
      });
    });
    await new Promise<void>((resolve) => duckling.listen(0, '127.0.0.1', resolve));
    const port = (duckling.address() as AddressInfo).port;
    builtin = await trainBot(
      dir,
      'builtin',
      '  - name: DucklingEntityExtractor\n    dimensions: [number, time]',
    );
    served = await trainBot(
      dir,
      'served',
      `  - name: DucklingEntityExtractor\n    url: http://127.0.0.1:${port}\n    dimensions: [number, time]\n    timezone: America/Los_Angeles`,
    );
    t = await startTestApp({ withDomain: false });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => duckling?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => t.registry.unload());

  const slots = async (sender: string): Promise<Record<string, unknown>> =>
    (await request(t.url).get(`/conversations/${sender}/tracker`).expect(200)).body.slots;

  describe('built in', () => {
    beforeEach(() => t.registry.load(builtin));

    it('POST /model/parse answers number, time and PERSON entities', async () => {
      const res = await request(t.url)
        .post('/model/parse')
        .send({ text: 'Sarah wants 3 pizzas tomorrow at 5pm' })
        .expect(200);
      const entities = res.body.entities as Array<Record<string, unknown>>;
      // In pipeline order: Duckling's, then spaCy's.
      expect(entities.map((e) => [e.entity, e.extractor])).toEqual([
        ['number', 'DucklingEntityExtractor'],
        ['time', 'DucklingEntityExtractor'],
        ['PERSON', 'SpacyEntityExtractor'],
      ]);
      expect(entities[2]).toEqual({
        entity: 'PERSON',
        value: 'Sarah',
        start: 0,
        confidence: null,
        end: 5,
        extractor: 'SpacyEntityExtractor',
      });
      expect(entities[0]).toEqual({
        start: 12,
        end: 13,
        text: '3',
        value: 3,
        confidence: 1,
        additional_info: { value: 3, type: 'value' },
        entity: 'number',
        extractor: 'DucklingEntityExtractor',
      });
      expect(entities[1]).toMatchObject({
        start: 21,
        end: 36,
        text: 'tomorrow at 5pm',
        additional_info: { grain: 'hour', type: 'value' },
      });
      expect(entities[1]?.value).toMatch(/^\d{4}-\d{2}-\d{2}T17:00:00\.000\+00:00$/);
    });

    it('a conversation fills slots from a number and a time', async () => {
      const s = uniqueId('pizza');
      expect(await sayRestTexts(t.url, s, 'I want 4 pizzas')).toEqual(['4 pizzas coming.']);
      expect((await slots(s))['count']).toBe(4);
      const [reply] = await sayRestTexts(t.url, s, 'remind me tomorrow at 5pm');
      const when = (await slots(s))['when'];
      expect(when).toMatch(/^\d{4}-\d{2}-\d{2}T17:00:00\.000\+00:00$/);
      expect(reply).toBe(`Reminder set for ${String(when)}.`);
    });
  });

  describe('with a Duckling server', () => {
    beforeEach(() => t.registry.load(served));

    it('POST /model/parse answers the server’s entities', async () => {
      const res = await request(t.url)
        .post('/model/parse')
        .send({ text: 'remind me at 5pm' })
        .expect(200);
      expect(res.body.intent.name).toBe('remind');
      expect(res.body.entities).toEqual([
        {
          start: 10,
          end: 16,
          text: 'at 5pm',
          value: '2030-01-02T17:00:00.000-08:00',
          confidence: 1,
          additional_info: {
            values: [{ value: '2030-01-02T17:00:00.000-08:00', grain: 'hour', type: 'value' }],
            value: '2030-01-02T17:00:00.000-08:00',
            grain: 'hour',
            type: 'value',
          },
          entity: 'time',
          extractor: 'DucklingEntityExtractor',
        },
      ]);
      const form = forms[forms.length - 1];
      expect(form?.get('text')).toBe('remind me at 5pm');
      expect(form?.get('tz')).toBe('America/Los_Angeles');
      expect(form?.get('dims')).toBe('["number","time"]');
      expect(Number(form?.get('reftime'))).toBeGreaterThan(0);
    });

    it('a conversation fills slots from the server’s number and time', async () => {
      const s = uniqueId('pizza');
      expect(await sayRestTexts(t.url, s, 'I want 7 pizzas')).toEqual(['7 pizzas coming.']);
      expect((await slots(s))['count']).toBe(7);
      expect(await sayRestTexts(t.url, s, 'remind me at 6pm')).toEqual([
        'Reminder set for 2030-01-02T18:00:00.000-08:00.',
      ]);
      expect((await slots(s))['when']).toBe('2030-01-02T18:00:00.000-08:00');
      expect(await sayRestTexts(t.url, uniqueId('pizza'), 'pizza please')).toEqual([
        'How many pizzas?',
      ]);
    });

    it('POST /model/test/stories?e2e=true predicts with the server’s entities', async () => {
      // The next action turns on the number entity, which only the server finds.
      const stories = `stories:
- story: seven pizzas
  steps:
  - user: |
      I want [7](number) pizzas
    intent: order
  - action: utter_order
- story: pizzas, no number
  steps:
  - user: |
      pizza please
    intent: order
  - action: utter_ask_count
`;
      const asked = forms.length;
      const res = await request(t.url)
        .post('/model/test/stories?e2e=true')
        .set('Content-Type', 'application/x-yaml')
        .send(stories)
        .expect(200);
      expect(res.body.is_end_to_end_evaluation).toBe(true);
      expect(res.body.report.conversation_accuracy).toEqual({
        accuracy: 1,
        correct: 2,
        with_warnings: 0,
        total: 2,
      });
      expect(
        (res.body.actions as Array<Record<string, unknown>>).map((a) => [a.action, a.predicted]),
      ).toEqual(
        expect.arrayContaining([
          ['utter_order', 'utter_order'],
          ['utter_ask_count', 'utter_ask_count'],
        ]),
      );
      const texts = forms.slice(asked).map((f) => f.get('text'));
      expect(texts).toEqual(expect.arrayContaining(['I want 7 pizzas', 'pizza please']));

      // Without the server's number, the first story fails: the entity decides.
      const failing = await request(t.url)
        .post('/model/test/stories?e2e=true')
        .set('Content-Type', 'application/x-yaml')
        .send(stories.replace('I want [7](number) pizzas', 'I want [seven](number) pizzas'))
        .expect(200);
      expect(failing.body.report.conversation_accuracy).toMatchObject({ correct: 1, total: 2 });

      // `parley test core --e2e` marks what was found on the wrong message, on one line.
      const file = join(dir, 'test_stories.yml');
      writeFileSync(
        file,
        stories.replace('I want [7](number) pizzas', 'I want [seven](number)\n      pizzas'),
      );
      const out = join(dir, 'results');
      const cli = await testCore({
        model: modelPaths.get('served') ?? '',
        stories: file,
        e2e: true,
        out,
      });
      expect(cli.evaluation.report.conversation_accuracy).toMatchObject({ correct: 1, total: 2 });
      const failed = readFileSync(join(out, 'failed_test_stories.yml'), 'utf8');
      expect(failed).toContain('# predicted: order: I want seven pizzas\n');
      expect(failed).not.toContain('pizzas coming');
    });
  });
});
