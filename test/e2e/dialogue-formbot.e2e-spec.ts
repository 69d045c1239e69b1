import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { withEndpointsFile } from 'test/utils/action-server';
import {
  FORMBOT,
  postTestStories,
  sayRestTexts,
  startAppWithModel,
  trainBot,
} from 'test/utils/bots';
import { freePort } from 'test/utils/cli';
import { FIXTURES, startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { startFormbotActionServer } from 'test/utils/formbot-action-server';

/**
 * The hotel booking form bot (test/fixtures/formbot) trained by `parley train`, its
 * `validate_booking_form` served by a real action server on loopback (endpoints.yml), and a
 * form filled through the REST channel with validation and an interruption.
 */
describe('formbot dialogue end to end', () => {
  let dir: string;
  let t: TestApp;
  let actions: Awaited<ReturnType<typeof withEndpointsFile>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-form-'));
    trainBot(FORMBOT, join(dir, 'models'));
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
    expect(await say(s, '/greet')).toEqual(['Hello! I book hotel rooms. What can I do for you?']);
    expect(await say(s, '/request_booking')).toEqual([
      'Which room would you like: single, double or suite?',
    ]);
    expect(await say(s, '/inform{"room_type": "penthouse"}')).toEqual([
      'We have no such room, please pick another one',
      'Which room would you like: single, double or suite?',
    ]);
    expect(await say(s, '/chitchat')).toEqual([
      'I only know about bookings',
      'Which room would you like: single, double or suite?',
    ]);
    expect(await say(s, '/inform{"room_type": "double"}')).toEqual(['How many guests?']);
    expect(await say(s, '/inform{"number": "0"}')).toEqual([
      'The number of guests should be a whole number above zero, please try again',
      'How many guests?',
    ]);
    expect(await say(s, '/inform{"number": "3"}')).toEqual(['Would you like breakfast?']);
    expect(await say(s, '/affirm')).toEqual(['Any special requests?']);
    const done = await say(s, '/deny');
    expect(done[0]).toBe('Your room is booked!');
    expect(done[1]).toContain('room_type: double');
    expect(done[1]).toContain('guests: 3');
    expect(done[1]).toContain('breakfast: True');
    expect(done[1]).toContain('requests: no special requests');

    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    expect(tracker.body.slots).toMatchObject({
      room_type: 'double',
      guests: 3,
      breakfast: true,
      requests: 'no special requests',
      requested_slot: null,
    });
    expect(tracker.body.active_loop).toEqual({});
    const events = tracker.body.events as Record<string, unknown>[];
    expect(
      events.some((e) => e.event === 'action_execution_rejected' && e.name === 'booking_form'),
    ).toBe(true);
    const call = actions.calls.find((c) => c.sender_id === s);
    expect(call).toMatchObject({
      next_action: 'validate_booking_form',
      version: expect.any(String),
    });
    expect(call?.domain).toHaveProperty('forms.booking_form');
  });

  it('an action server answering 400 rejects the form without losing the turn', async () => {
    const s = uniqueId('form');
    await say(s, '/request_booking');
    await say(s, '/inform{"room_type": "reject"}');
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    const events = tracker.body.events as Record<string, unknown>[];
    expect(events.filter((e) => e.event === 'user')).toHaveLength(2);
    expect(
      events.some((e) => e.event === 'action_execution_rejected' && e.name === 'booking_form'),
    ).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'action', name: 'action_listen' });
  });

  it('finds numbers with the regex and lookup table', async () => {
    const res = await request(t.url)
      .post('/model/parse')
      .send({ text: 'a room for 4 guests' })
      .expect(200);
    expect(res.body.entities).toEqual(
      expect.arrayContaining([expect.objectContaining({ entity: 'number', value: '4' })]),
    );
  });

  it('passes its test stories over HTTP', async () => {
    const res = await postTestStories(
      t.url,
      join(FIXTURES, 'formbot', 'tests', 'test_stories.yml'),
    );
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
      .send({ sender: s, message: '/request_booking' })
      .expect(200);
    const res = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender: s, message: '/inform{"room_type": "double"}' })
      .expect(200);
    expect(Array.isArray(res.body)).toBe(true);
    const tracker = await request(t.url).get(`/conversations/${s}/tracker`).expect(200);
    const events = tracker.body.events as Record<string, unknown>[];
    expect(events.filter((e) => e.event === 'user')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ event: 'action', name: 'action_listen' });
  });
});
