import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { withEndpointsFile } from 'test/utils/action-server';
import {
  botFiles,
  FORMBOT_DIR,
  postTestStories,
  sayRestTexts,
  startAppWithModel,
  trainBot,
} from 'test/utils/bots';
import { freePort } from 'test/utils/cli';
import { FIXTURES, startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { startFormbotActionServer } from 'test/utils/formbot-action-server';

const FORMBOT = botFiles(FORMBOT_DIR, join(FIXTURES, 'formbot', 'config.yml'));

/**
 * The formbot trained by `parley train` (regex/lookup stand-in for Duckling), its
 * `validate_restaurant_form` served by a real action server on loopback (endpoints.yml), and a
 * form filled through the REST channel with validation and an interruption.
 */
describe('formbot dialogue end to end', () => {
  let dir: string;
  let t: TestApp;
  let actions: Awaited<ReturnType<typeof withEndpointsFile>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-form-'));
    trainBot(
      { ...FORMBOT, data: [...FORMBOT.data, join(FIXTURES, 'formbot', 'data')] },
      join(dir, 'models'),
    );
    actions = await withEndpointsFile(startFormbotActionServer());
    t = await startTestApp({
      env: { PARLEY_ENDPOINTS: actions.endpoints, PARLEY_MODEL: join(dir, 'models') },
    });
    await request(t.url)
      .put('/model')
      .send({ model_file: join(dir, 'models') })
      .expect(204);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const say = (sender: string, message: string): Promise<unknown[]> =>
    sayRestTexts(t.url, sender, message);

  it('fills the form with validation and an interruption, then submits', async () => {
    const s = uniqueId('form');
    expect(await say(s, '/greet')).toEqual([
      'Hello! I am restaurant search assistant! How can I help?',
    ]);
    expect(await say(s, '/request_restaurant')).toEqual(['What cuisine?']);
    expect(await say(s, '/inform{"cuisine": "klingon"}')).toEqual([
      'Cuisine type is not in the database, please try again',
      'What cuisine?',
    ]);
    expect(await say(s, '/chitchat')).toEqual(['chitchat', 'What cuisine?']);
    expect(await say(s, '/inform{"cuisine": "greek"}')).toEqual(['How many people?']);
    expect(await say(s, '/inform{"number": "0"}')).toEqual([
      'Number of people should be a positive integer, please try again',
      'How many people?',
    ]);
    expect(await say(s, '/inform{"number": "3"}')).toEqual(['Do you want to sit outside?']);
    expect(await say(s, '/affirm')).toEqual(['Please provide additional preferences']);
    expect(await say(s, '/deny')).toEqual(['Please give your feedback on your experience so far']);
    const done = await say(s, '/inform{"feedback": "great"}');
    expect(done[0]).toBe('All done!');
    expect(done[1]).toContain('cuisine: greek');
    expect(done[1]).toContain('num_people: 3');
    expect(done[1]).toContain('outdoor_seating: True');
    expect(done[1]).toContain('preferences: no additional preferences');

    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.slots).toMatchObject({
      cuisine: 'greek',
      num_people: 3,
      outdoor_seating: true,
      preferences: 'no additional preferences',
      feedback: 'great',
      requested_slot: null,
    });
    expect(tracker.body.active_loop).toEqual({});
    const events = tracker.body.events as Record<string, unknown>[];
    expect(
      events.some((e) => e.event === 'action_execution_rejected' && e.name === 'restaurant_form'),
    ).toBe(true);
    const call = actions.calls.find((c) => c.sender_id === s);
    expect(call).toMatchObject({
      next_action: 'validate_restaurant_form',
      version: expect.any(String),
    });
    expect(call?.domain).toHaveProperty('forms.restaurant_form');
  });

  it('an action server answering 400 rejects the form without losing the turn', async () => {
    const s = uniqueId('form');
    await say(s, '/request_restaurant');
    await say(s, '/inform{"cuisine": "reject"}');
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    const events = tracker.body.events as Record<string, unknown>[];
    expect(events.filter((e) => e.event === 'user')).toHaveLength(2);
    expect(
      events.some((e) => e.event === 'action_execution_rejected' && e.name === 'restaurant_form'),
    ).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'action', name: 'action_listen' });
  });

  it('finds numbers with the regex/lookup stand-in for Duckling', async () => {
    const res = await request(t.url)
      .post('/model/parse')
      .send({ text: 'a table for 4 people' })
      .expect(200);
    expect(res.body.entities).toEqual(
      expect.arrayContaining([expect.objectContaining({ entity: 'number', value: '4' })]),
    );
  });

  it('passes its (corrected) test stories over HTTP', async () => {
    const res = await postTestStories(t.url, join(FIXTURES, 'formbot', 'test_stories.yml'));
    expect(res.body.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 3,
      with_warnings: 0,
      total: 3,
    });
  });
});

describe('formbot with an unreachable action server', () => {
  let dir: string;
  let t: TestApp;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-form-down-'));
    trainBot(FORMBOT, join(dir, 'models'));
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(
      endpoints,
      `action_endpoint:\n  url: "http://127.0.0.1:${await freePort()}/webhook"\n`,
    );
    t = await startAppWithModel(join(dir, 'models'), {
      env: { PARLEY_ENDPOINTS: endpoints, ACTION_SERVER_TIMEOUT_MS: '2000' },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the user message and answers what it can', async () => {
    const s = uniqueId('down');
    await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender: s, message: '/request_restaurant' })
      .expect(200);
    const res = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender: s, message: '/inform{"cuisine": "greek"}' })
      .expect(200);
    expect(Array.isArray(res.body)).toBe(true);
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    const events = tracker.body.events as Record<string, unknown>[];
    expect(events.filter((e) => e.event === 'user')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ event: 'action', name: 'action_listen' });
  });
});
