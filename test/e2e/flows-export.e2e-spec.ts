import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import {
  FLOWSBOT,
  sayRestTexts,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { cli } from 'test/utils/cli';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { parse } from 'yaml';

const TOKEN = 'flows-export-token';

/**
 * A CALM conversation held over the REST channel, exported as Rasa Pro exports it: as a story
 * (`GET /conversations/{id}/story`, with commands and stack updates) and as an end-to-end test
 * case (`GET /conversations/{id}/test_case`) that `parley test e2e` runs against the same model.
 */
describe('Export of a flows conversation', () => {
  let t: TrainedBotApp;
  let sender: string;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(FLOWSBOT, 'parley-flows-export-');
    sender = uniqueId('repair');
    const say = (text: string) => sayRestTexts(t.url, sender, text);
    expect(await say('my bike needs fixing')).toEqual([
      'What kind of bike is it: road, city or mountain?',
    ]);
    expect(await say('it is a city bike')).toEqual(['Which day would you like to bring it in?']);
    expect(await say('friday works')).toEqual(['Book a repair of your city bike on friday?']);
    expect(await say('yes')).toEqual([
      'Booked: bring your city bike on friday.',
      'What else can I help you with?',
    ]);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('writes the story with the commands of each turn and the stack updates, without flow events', async () => {
    const res = await request(t.url).get(`/conversations/${sender}/story`).expect(200);
    const story = res.text;
    const doc = parse(story) as { stories: { story: string; steps: Record<string, unknown>[] }[] };
    const steps = doc.stories[0]?.steps ?? [];
    const first = steps.find((s) => 'user' in s);
    expect(first).toEqual({
      intent: 'book_repair',
      user: 'my bike needs fixing',
      commands: [{ command: 'start flow', flow: 'book_repair' }],
    });
    const stack = steps.filter((s) => 'stack' in s).map((s) => s.stack as unknown[]);
    // The command processor's push and the flow's move onto its first step, as one update.
    expect(stack[0]).toEqual([
      {
        op: 'add',
        path: '/0',
        value: expect.objectContaining({ flow_id: 'book_repair', type: 'flow', step_id: 'START' }),
      },
      { op: 'replace', path: '/0/step_id', value: 'book_repair_0_collect_bike_type' },
    ]);
    expect(steps).toContainEqual({ slot_was_set: [{ bike_type: 'city' }] });
    expect(steps).toContainEqual({ action: 'utter_repair_booked' });
    expect(story).not.toContain('flow_hashes');
    expect(story).not.toContain('flow_started');
    expect(story).not.toContain('flow_completed');
  });

  it('answers 400 for an unknown format', async () => {
    const res = await request(t.url)
      .get(`/conversations/${sender}/test_case?format=xml`)
      .expect(400);
    expect(res.body).toMatchObject({ status: 'failure', code: 400 });
    expect(res.body.message).toContain("'format'");
  });

  it('gives the test case as JSON with ?format=json', async () => {
    const res = await request(t.url)
      .get(`/conversations/${sender}/test_case?format=json`)
      .expect(200);
    expect(res.body).toEqual({
      test_cases: [
        {
          test_case: sender,
          steps: [
            { user: 'my bike needs fixing' },
            { utter: 'utter_ask_bike_type' },
            { user: 'it is a city bike' },
            { slot_was_set: [{ bike_type: 'city' }] },
            { utter: 'utter_ask_weekday' },
            { user: 'friday works' },
            // ask_before_filling: the flow empties the slot before it asks (same turn, one step).
            { slot_was_set: [{ weekday: 'friday' }, { confirm_repair: null }] },
            { utter: 'utter_ask_confirm_repair' },
            { user: 'yes' },
            { slot_was_set: [{ confirm_repair: true }] },
            { utter: 'utter_repair_booked' },
            // The flow's slots are reset when it ends.
            {
              slot_was_set: [{ bike_type: null }, { weekday: null }, { confirm_repair: null }],
            },
            { utter: 'utter_can_do_something_else' },
          ],
        },
      ],
    });
  });

  it('gives a YAML test case that `parley test e2e` passes against the same model', async () => {
    const res = await request(t.url).get(`/conversations/${sender}/test_case`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/yaml/);
    expect(res.text).toMatch(/^test_cases:\n {2}- test_case: /);
    expect(res.text).toContain('- user: "my bike needs fixing"\n');
    const file = join(t.dir, 'exported_test_case.yml');
    writeFileSync(file, res.text);
    const run = cli(['test', 'e2e', file, '--model', join(t.dir, 'models')], {}, 120_000);
    expect(`${run.stdout}${run.stderr}`).toContain('0 failed, 1 passed');
    expect(run.status).toBe(0);

    // A changed expectation fails: the test case checks what the bot does.
    const wrong = res.text.replace('utter_repair_booked', 'utter_repair_not_booked');
    writeFileSync(file, wrong);
    const failed = cli(['test', 'e2e', file, '--model', join(t.dir, 'models')], {}, 120_000);
    expect(failed.stdout).toContain('1 failed, 0 passed');
    expect(failed.status).toBe(1);
  }, 240_000);

  it('answers POST /model/parse with commands as Rasa Pro: none from the generators, a payload its own', async () => {
    const parsed = (
      await request(t.url).post('/model/parse').send({ text: 'my bike needs fixing' }).expect(200)
    ).body as Record<string, unknown>;
    expect(parsed).toMatchObject({ intent: { name: 'book_repair' }, commands: [] });
    expect(parsed).not.toHaveProperty('flows_in_prompt');
    const payload = (
      await request(t.url)
        .post('/model/parse')
        .send({ text: '/SetSlots(bike_type=city)' })
        .expect(200)
    ).body as Record<string, unknown>;
    expect(payload).toEqual({
      text: '/SetSlots(bike_type=city)',
      intent: { name: null, confidence: 0 },
      entities: [],
      commands: [
        {
          command: 'set slot',
          name: 'bike_type',
          value: 'city',
          extractor: 'CommandPayloadReader',
        },
      ],
    });
  });

  it('runs Rasa Pro assertions with parley test e2e: passing, failing, LLM-judged ones skipped', () => {
    const cases = (flowStarted: string) =>
      [
        'test_cases:',
        '  - test_case: repair with assertions',
        '    assertion_order_enabled: true',
        '    steps:',
        '      - user: "my bike needs fixing"',
        '        assertions:',
        `          - flow_started: ${flowStarted}`,
        '          - bot_uttered: { utter_name: utter_ask_bike_type, text_matches: "road, city or mountain" }',
        '      - user: "it is a city bike"',
        '        assertions:',
        '          - slot_was_set: [{ name: bike_type, value: city }]',
        '          - slot_was_not_set: [{ name: weekday }]',
        '          - bot_did_not_utter: { utter_name: utter_ask_bike_type }',
        '      - user: "friday works"',
        '      - user: "no"',
        '        assertions:',
        '          - action_executed: utter_repair_not_booked',
        '          - flow_completed: { flow_id: book_repair }',
        '          - generative_response_is_relevant: { threshold: 0.8 }',
        '',
      ].join('\n');
    const file = join(t.dir, 'assertions.yml');
    writeFileSync(file, cases('book_repair'));
    const passed = cli(['test', 'e2e', file, '--model', join(t.dir, 'models')], {}, 120_000);
    expect(passed.stdout).toContain('0 failed, 1 passed');
    expect(passed.stderr).toContain(
      "'generative_response_is_relevant' (line 19) needs an LLM judge",
    );
    expect(passed.status).toBe(0);

    writeFileSync(file, cases('opening_hours'));
    const failed = cli(['test', 'e2e', file, '--model', join(t.dir, 'models')], {}, 120_000);
    expect(failed.stdout).toContain(`Mismatch starting at ${file}:7:`);
    expect(failed.stdout).toContain(
      "Assertion type 'flow_started' failed with this error message: Flow with id 'opening_hours' did not start.",
    );
    expect(failed.stdout).toContain('1 failed, 0 passed');
    expect(failed.status).toBe(1);
  }, 240_000);

  it('gives no steps for an unknown conversation', async () => {
    const res = await request(t.url)
      .get(`/conversations/${uniqueId('nobody')}/test_case?format=json`)
      .expect(200);
    expect(res.body.test_cases[0].steps).toEqual([]);
  });
});

describe('GET /conversations/{id}/test_case: auth', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PARLEY_AUTH_TOKEN: TOKEN }, withDomain: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers 401 without the token, as the story route', async () => {
    const res = await request(t.url).get('/conversations/someone/test_case').expect(401);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'NotAuthenticated', code: 401 });
    await request(t.url).get('/conversations/someone/story').expect(401);
    await request(t.url).get(`/conversations/someone/test_case?token=wrong`).expect(401);
  });
});
