import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OutputChannel, OutputChannelDirectory, type JsonObject } from 'src/core';
import request from 'supertest';
import {
  MOODBOT,
  MOODBOT_DIR,
  postTestStories,
  sayRest,
  startAppWithTrainedBot,
  type TrainedBotApp,
} from 'test/utils/bots';
import { BIN, ROOT } from 'test/utils/cli';
import { FIXTURES, uniqueId } from 'test/utils/create-test-app';

const BOT = MOODBOT_DIR;

/** An output channel that records what it is sent. */
class RecordingChannel extends OutputChannel {
  readonly sent: JsonObject[] = [];
  constructor(readonly name: string) {
    super();
  }
  send(recipientId: string, message: JsonObject): Promise<void> {
    this.sent.push({ recipient_id: recipientId, ...message });
    return Promise.resolve();
  }
}

/**
 * The bundled moodbot (default pipeline) trained by `parley train` (NLU + policies in one
 * archive), loaded by PUT /model, and talked to through the REST channel and the dialogue
 * routes.
 */
describe('moodbot dialogue end to end', () => {
  let dir: string;
  let t: TrainedBotApp;

  beforeAll(async () => {
    t = await startAppWithTrainedBot(MOODBOT, 'parley-mood-');
    dir = t.dir;
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  const say = (sender: string, message: string): Promise<Record<string, unknown>[]> =>
    sayRest(t.url, sender, message);

  it('greets with buttons, then the unhappy path sends the cheer-up image and asks if it helped', async () => {
    const sender = uniqueId('mood');
    expect(await say(sender, 'hello')).toEqual([
      {
        recipient_id: sender,
        text: 'Hi there! How is your day going?',
        buttons: [
          { title: 'good', payload: '/mood_great' },
          { title: 'not so good', payload: '/mood_unhappy' },
        ],
      },
    ]);
    expect(await say(sender, '/mood_unhappy')).toEqual([
      { recipient_id: sender, text: 'Maybe this picture brightens it up:' },
      { recipient_id: sender, image: 'https://images.example.org/parley/sunrise.jpg' },
      { recipient_id: sender, text: 'Did that lift your mood?' },
    ]);
    expect(await say(sender, '/affirm')).toEqual([
      { recipient_id: sender, text: 'Glad to hear it. Keep it up!' },
    ]);

    const tracker = await request(t.url)
      .get(`/conversations/${sender}/tracker?include_events=ALL`)
      .expect(200);
    const events = tracker.body.events as Record<string, unknown>[];
    const actions = events.filter((e) => e.event === 'action').map((e) => e.name);
    expect(actions).toEqual([
      'action_session_start',
      'action_listen',
      'utter_greet',
      'action_listen',
      'utter_cheer_up',
      'utter_did_that_help',
      'action_listen',
      'utter_happy',
      'action_listen',
    ]);
    const greet = events.find((e) => e.event === 'action' && e.name === 'utter_greet');
    expect(greet).toMatchObject({
      policy: expect.stringMatching(/MemoizationPolicy|RulePolicy/),
      confidence: 1,
    });
    expect((greet?.metadata as Record<string, unknown>).model_id).toEqual(expect.any(String));
    expect((greet?.metadata as Record<string, unknown>).assistant_id).toBe('parley_mood');
  });

  it('`parley shell` chats through a pipe and ends at end of input', () => {
    const r = spawnSync(process.execPath, [BIN, 'shell', '--model', join(dir, 'models')], {
      cwd: ROOT,
      input: '/greet\n/mood_unhappy\n/deny\n',
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual([
      'Hi there! How is your day going?',
      '  [good](/mood_great)',
      '  [not so good](/mood_unhappy)',
      'Maybe this picture brightens it up:',
      'Image: https://images.example.org/parley/sunrise.jpg',
      'Did that lift your mood?',
      'See you later!',
    ]);
  });

  it('/restart restarts the conversation and starts a new session', async () => {
    const sender = uniqueId('mood');
    await say(sender, '/greet');
    expect(await say(sender, '/restart')).toEqual([]);
    const tracker = await request(t.url)
      .get(`/conversations/${sender}/tracker?include_events=ALL`)
      .expect(200);
    const tail = (tracker.body.events as Record<string, unknown>[])
      .slice(-5)
      .map((e) => (e.event === 'action' ? e.name : e.event));
    expect(tail).toEqual([
      'action_restart',
      'restart',
      'action_session_start',
      'session_started',
      'action_listen',
    ]);
  });

  it('streams the messages as JSON lines with ?stream=true', async () => {
    const sender = uniqueId('mood');
    await say(sender, '/greet');
    const res = await request(t.url)
      .post('/webhooks/rest/webhook?stream=true')
      .send({ sender, message: '/mood_unhappy' })
      .buffer(true)
      .parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString('utf8')));
        r.on('end', () => cb(null, text));
      })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const lines = (res.body as string).split('\n').filter(Boolean);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { recipient_id: sender, text: 'Maybe this picture brightens it up:' },
      { recipient_id: sender, image: 'https://images.example.org/parley/sunrise.jpg' },
      { recipient_id: sender, text: 'Did that lift your mood?' },
    ]);
  });

  it('answers a bot challenge anywhere by the rule', async () => {
    const sender = uniqueId('mood');
    expect(await say(sender, '/bot_challenge')).toEqual([
      { recipient_id: sender, text: 'I am a bot, built with Parley.' },
    ]);
  });

  it('hides the turns of a rule no story contains from the ML policies (hide_rule_turn)', async () => {
    // The bot challenge rule is in no story: its turn is marked and left out of what
    // memoization sees, so the sad path story still matches after it.
    const sender = uniqueId('mood');
    await say(sender, '/greet');
    expect(await say(sender, '/bot_challenge')).toEqual([
      { recipient_id: sender, text: 'I am a bot, built with Parley.' },
    ]);
    const texts = (await say(sender, '/mood_unhappy')).map((m) => m.text ?? m.image);
    expect(texts).toEqual([
      'Maybe this picture brightens it up:',
      'https://images.example.org/parley/sunrise.jpg',
      'Did that lift your mood?',
    ]);
    const tracker = await request(t.url)
      .get(`/conversations/${sender}/tracker?include_events=ALL`)
      .expect(200);
    const actions = (tracker.body.events as Record<string, unknown>[])
      .filter((e) => e.event === 'action')
      .map((e) => [e.name, e.policy, e.hide_rule_turn]);
    expect(actions).toEqual([
      ['action_session_start', null, false],
      ['action_listen', null, false],
      ['utter_greet', 'policy_0_MemoizationPolicy', false],
      ['action_listen', 'policy_0_MemoizationPolicy', false],
      ['utter_iamabot', 'policy_1_RulePolicy', true],
      ['action_listen', 'policy_1_RulePolicy', true],
      ['utter_cheer_up', 'policy_0_MemoizationPolicy', false],
      ['utter_did_that_help', 'policy_0_MemoizationPolicy', false],
      ['action_listen', 'policy_0_MemoizationPolicy', false],
    ]);
  });

  it('rejects a webhook body without sender or message', async () => {
    const a = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ message: 'hi' })
      .expect(400);
    expect(a.body).toMatchObject({ status: 'failure', reason: 'BadRequest', code: 400 });
    await request(t.url).post('/webhooks/rest/webhook').send({ sender: 'x' }).expect(400);
    await request(t.url).post('/webhooks/rest/webhook').send([1, 2]).expect(400);
    await request(t.url).get('/webhooks/rest/').expect(200, { status: 'ok' });
  });

  it('evaluates the moodbot test stories over HTTP with conversation accuracy 1.0', async () => {
    const stories = join(BOT, 'tests', 'test_stories.yml');
    const res = await postTestStories(t.url, stories);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'accuracy',
        'actions',
        'f1',
        'in_training_data_fraction',
        'is_end_to_end_evaluation',
        'precision',
        'report',
      ].sort(),
    );
    expect(res.body.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 7,
      with_warnings: 0,
      total: 7,
    });
    expect(res.body.accuracy).toBe(1);
    expect(res.body.is_end_to_end_evaluation).toBe(false);
    expect(res.body.actions[0]).toEqual({
      action: 'utter_greet',
      predicted: 'utter_greet',
      policy: expect.any(String),
      confidence: 1,
    });
    const e2e = await postTestStories(t.url, stories, '?e2e=true');
    expect(e2e.body.is_end_to_end_evaluation).toBe(true);
    await request(t.url)
      .post('/model/test/stories')
      .set('Content-Type', 'application/x-yaml')
      .send('')
      .expect(400);
  });

  it('trigger_intent predicts and answers in messages; unknown intents are 404 naming the intent', async () => {
    const sender = uniqueId('mood');
    const res = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent`)
      .send({ name: 'greet' })
      .expect(200);
    expect(res.body.messages).toEqual([
      expect.objectContaining({ recipient_id: sender, text: 'Hi there! How is your day going?' }),
    ]);
    expect(res.body.tracker.latest_action_name).toBe('action_listen');
    const missing = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent`)
      .send({ name: 'no_such_intent' })
      .expect(404);
    expect(missing.body.message).toContain('no_such_intent');
    const noName = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent`)
      .send({})
      .expect(400);
    expect(noName.body.message).toBe('Name of the intent not provided in request body.');
    await request(t.url)
      .post(`/conversations/${sender}/trigger_intent`)
      .send({ name: 'greet', entities: 'x' })
      .expect(400);
  });

  it('predict scores every action sorted by score then name, and stores nothing new but the session', async () => {
    const sender = uniqueId('mood');
    await request(t.url).post(`/conversations/${sender}/predict`).expect(404);
    await request(t.url)
      .post(`/conversations/${sender}/messages`)
      .send({ text: '/greet', sender: 'user' })
      .expect(200);
    const res = await request(t.url).post(`/conversations/${sender}/predict`).expect(200);
    expect(res.body.scores[0]).toEqual({ action: 'utter_greet', score: 1 });
    const scores = res.body.scores as { action: string; score: number }[];
    for (let i = 1; i < scores.length; i++) {
      const a = scores[i - 1] as { action: string; score: number };
      const b = scores[i] as { action: string; score: number };
      expect(a.score > b.score || (a.score === b.score && a.action < b.action)).toBe(true);
    }
    expect(res.body.confidence).toBe(1);
    expect(typeof res.body.policy).toBe('string');
  });

  it('predicts on posted events without storing them (model/predict)', async () => {
    const events = [
      { event: 'action', name: 'action_listen' },
      {
        event: 'user',
        text: 'hi',
        parse_data: { intent: { name: 'greet', confidence: 1 }, entities: [] },
      },
    ];
    const res = await request(t.url).post('/model/predict').send(events).expect(200);
    expect(res.body.tracker.sender_id).toBe('default');
    const best = [...(res.body.scores as { action: string; score: number }[])].sort(
      (a, b) => b.score - a.score,
    )[0];
    expect(best).toEqual({ action: 'utter_greet', score: 1 });
    await request(t.url).get('/conversations/default/tracker').expect(200);
    await request(t.url).post('/model/predict').send({ event: 'user' }).expect(400);
    await request(t.url)
      .post('/model/predict')
      .send([{ event: 'user', parse_data: { entities: {} } }])
      .expect(400);
  });

  it('execute runs a named action; unknown actions and a missing name are clear errors', async () => {
    const sender = uniqueId('mood');
    await request(t.url)
      .post(`/conversations/${sender}/execute`)
      .send({ name: 'utter_happy' })
      .expect(404);
    await request(t.url)
      .post(`/conversations/${sender}/messages`)
      .send({ text: '/greet', sender: 'user' })
      .expect(200);
    const res = await request(t.url)
      .post(`/conversations/${sender}/execute?include_events=ALL`)
      .send({ name: 'utter_happy', policy: 'manual', confidence: 0.5 })
      .expect(200);
    expect(res.body.messages).toEqual([
      { recipient_id: sender, text: 'Glad to hear it. Keep it up!' },
    ]);
    const last = (res.body.tracker.events as Record<string, unknown>[])
      .filter((e) => e.event === 'action')
      .pop();
    expect(last).toMatchObject({ name: 'utter_happy', policy: 'manual', confidence: 0.5 });
    const noName = await request(t.url)
      .post(`/conversations/${sender}/execute`)
      .send({})
      .expect(400);
    expect(noName.body.message).toBe('Name of the action not provided in request body.');
    const unknown = await request(t.url)
      .post(`/conversations/${sender}/execute`)
      .send({ name: 'utter_nope' })
      .expect(500);
    expect(unknown.body.message).toContain('utter_nope');
    await request(t.url)
      .post(`/conversations/${sender}/execute?include_events=BOGUS`)
      .send({ name: 'utter_happy' })
      .expect(400);
  });

  it('execute_side_effects sends posted bot events to the output channel', async () => {
    const channel = new RecordingChannel('sidefx');
    t.app.get(OutputChannelDirectory).register('sidefx', () => channel);
    const sender = uniqueId('mood');
    const res = await request(t.url)
      .post(
        `/conversations/${sender}/tracker/events?execute_side_effects=true&output_channel=sidefx`,
      )
      .send([{ event: 'bot', text: 'hello from outside' }])
      .expect(200);
    expect(res.body.events.at(-1)).toMatchObject({ event: 'bot', text: 'hello from outside' });
    expect(channel.sent).toEqual([{ recipient_id: sender, text: 'hello from outside' }]);
    await request(t.url)
      .post(`/conversations/${sender}/tracker/events?output_channel=sidefx`)
      .send([{ event: 'bot', text: 'not sent' }])
      .expect(200);
    expect(channel.sent).toHaveLength(1);
  });

  it('output_channel: a registered channel gets the responses, `latest` follows the user, others collect', async () => {
    const callback = new RecordingChannel('callback');
    const mine = new RecordingChannel('mychannel');
    const registry = t.app.get(OutputChannelDirectory);
    registry.register('callback', () => callback);
    registry.register('mychannel', () => mine);

    const sender = uniqueId('out');
    const viaCallback = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent?output_channel=callback`)
      .send({ name: 'greet' })
      .expect(200);
    expect(viaCallback.body).not.toHaveProperty('messages');
    expect(callback.sent).toEqual([
      expect.objectContaining({ recipient_id: sender, text: 'Hi there! How is your day going?' }),
    ]);

    await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: '/mood_great', input_channel: 'mychannel' })
      .expect(200);
    const viaLatest = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent?output_channel=latest`)
      .send({ name: 'bot_challenge' })
      .expect(200);
    expect(viaLatest.body).not.toHaveProperty('messages');
    expect(mine.sent).toEqual([{ recipient_id: sender, text: 'I am a bot, built with Parley.' }]);

    const collected = await request(t.url)
      .post(`/conversations/${sender}/execute?output_channel=no_such_channel`)
      .send({ name: 'utter_goodbye' })
      .expect(200);
    expect(collected.body.messages).toEqual([{ recipient_id: sender, text: 'See you later!' }]);
  });

  it('a reminder fires at its time while the server runs; a cancelled one does not', async () => {
    const sender = uniqueId('remind');
    const at = (ms: number): string => new Date(Date.now() + ms).toISOString();
    await request(t.url)
      .post(`/conversations/${sender}/tracker/events?execute_side_effects=true`)
      .send([
        {
          event: 'reminder',
          intent: 'greet',
          date_time: at(300),
          name: 'hello',
          kill_on_user_msg: false,
        },
        { event: 'reminder', intent: 'goodbye', date_time: at(300), name: 'bye' },
        { event: 'cancel_reminder', name: 'bye' },
      ])
      .expect(200);
    let users: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && users.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await request(t.url).get(`/conversations/${sender}/tracker?include_events=ALL`);
      const events = res.body.events as Record<string, unknown>[];
      users = events.filter((e) => e.event === 'user');
      if (users.length > 0) {
        await new Promise((r) => setTimeout(r, 800));
        const again = await request(t.url).get(
          `/conversations/${sender}/tracker?include_events=ALL`,
        );
        const all = again.body.events as Record<string, unknown>[];
        users = all.filter((e) => e.event === 'user');
        expect(all.filter((e) => e.event === 'action').map((e) => e.name)).toContain('utter_greet');
        expect(all.map((e) => e.name)).not.toContain('utter_goodbye');
      }
    }
    expect(users).toEqual([
      expect.objectContaining({
        text: 'EXTERNAL: greet',
        metadata: expect.objectContaining({ is_external: true }),
      }),
    ]);
  });

  it('POST /model/train trains dialogue-only data; a rule with two user messages is a 400 naming it', async () => {
    const domain = readFileSync(join(BOT, 'domain.yml'), 'utf8');
    const data = ['stories.yml', 'rules.yml']
      .map((f) => readFileSync(join(BOT, 'data', f), 'utf8').replace(/^version:.*$/m, ''))
      .join('\n');
    const body = `${domain}\nlanguage: en\npolicies:\n- name: MemoizationPolicy\n- name: RulePolicy\n${data}`;
    const trained = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(body)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const archive = join(dir, 'core-only.tar.gz');
    writeFileSync(archive, trained.body as Buffer);
    await request(t.url).put('/model').send({ model_file: archive }).expect(204);
    try {
      const sender = uniqueId('core');
      const res = await request(t.url)
        .post(`/conversations/${sender}/trigger_intent`)
        .send({ name: 'greet' })
        .expect(200);
      expect(res.body.messages[0]).toMatchObject({ text: 'Hi there! How is your day going?' });
    } finally {
      await request(t.url)
        .put('/model')
        .send({ model_file: join(dir, 'models') })
        .expect(204);
    }

    const rules = readFileSync(join(FIXTURES, 'rules', 'data', 'rules.yml'), 'utf8');
    const rulesDomain = readFileSync(join(FIXTURES, 'rules', 'domain.yml'), 'utf8');
    const bad = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(
        `${rulesDomain}\nlanguage: en\npolicies:\n- name: RulePolicy\n${rules.replace(/^version:.*$/m, '')}`,
      );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('detailed answer did not help - go on');
  });
});
