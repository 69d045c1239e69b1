import request from 'supertest';
import {
  credentialsFile,
  MOODBOT_GREETING as GREETING,
  removeTempDirs,
  trainMoodbot,
} from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

/**
 * Custom channels (test/fixtures/channels/my_channels.js) named in credentials.yml, with the
 * moodbot through the real dialogue engine.
 */
describe('custom channels (moodbot)', () => {
  let t: TestApp;

  beforeAll(async () => {
    const models = trainMoodbot();
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: models,
        PARLEY_CREDENTIALS: credentialsFile(
          [
            'test.fixtures.channels.my_channels.MyChannel:',
            'test.fixtures.channels.my_channels.EchoChannel:',
            './test/fixtures/channels/my_channels.ShoutChannel:',
            '  greeting: hello',
          ].join('\n'),
        ),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('answers {messages, metadata, conversation_id, tracker_state} by default', async () => {
    const sender = uniqueId('myio');
    const res = await request(t.url)
      .post('/webhooks/myio/webhook')
      .send({ sender, message: 'hi', metadata: { page: 'home' } });
    expect(res.status).toBe(200);
    expect(res.body.messages).toEqual([{ recipient_id: sender, ...GREETING }]);
    expect(res.body.metadata).toEqual({ page: 'home' });
    expect(res.body.conversation_id).toBe(sender);
    const state = res.body.tracker_state;
    expect(state.sender_id).toBe(sender);
    expect(state.latest_input_channel).toBe('myio');
    expect(state.latest_message.intent.name).toBe('greet');
    expect(state.latest_action_name).toBe('action_listen');
    const user = state.events.find((e: { event: string }) => e.event === 'user');
    expect(user.metadata).toMatchObject({ page: 'home' });
    expect(state.events.filter((e: { event: string }) => e.event === 'bot')).toHaveLength(1);
  });

  it('honours input_channel from the body and an empty metadata', async () => {
    const sender = uniqueId('myio');
    const res = await request(t.url)
      .post('/webhooks/myio/webhook')
      .send({ sender, message: '/greet', input_channel: 'kiosk' })
      .expect(200);
    expect(res.body.messages).toEqual([{ recipient_id: sender, ...GREETING }]);
    expect(res.body.metadata).toEqual({});
    expect(res.body.tracker_state.latest_input_channel).toBe('kiosk');
  });

  it('streams the messages one JSON line each with stream: true', async () => {
    const sender = uniqueId('myio');
    await request(t.url)
      .post('/webhooks/myio/webhook')
      .send({ sender, message: 'hello' })
      .expect(200);
    const res = await request(t.url)
      .post('/webhooks/myio/webhook?stream=true')
      .send({ sender, message: '/mood_unhappy' })
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const lines = (res.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { recipient_id: sender, text: 'Maybe this picture brightens it up:' },
      { recipient_id: sender, image: 'https://images.example.org/parley/sunrise.jpg' },
      { recipient_id: sender, text: 'Did that lift your mood?' },
    ]);
  });

  it('reads its own body with its own extractors and answers the default shape', async () => {
    const id = uniqueId('echo');
    const res = await request(t.url)
      .post('/webhooks/echo/webhook')
      .send({ from: id, says: 'hello', metadata: { lang: 'en' } })
      .expect(200);
    expect(res.body.messages).toEqual([{ recipient_id: id, ...GREETING }]);
    expect(res.body.metadata).toEqual({ lang: 'en' });
    expect(res.body.conversation_id).toBe(id);
    expect(res.body.tracker_state.latest_input_channel).toBe('echo');
    // Its extractors decide what is missing: no sender → 400 naming the channel.
    const bad = await request(t.url).post('/webhooks/echo/webhook').send({ says: 'x' }).expect(400);
    expect(bad.body.message).toBe('Channel "echo" found no sender id in the request.');
  });

  it("uses a channel's own extractors and response", async () => {
    const id = uniqueId('shout');
    const res = await request(t.url)
      .post('/webhooks/shout/webhook')
      .set('user-agent', 'shout-client/1')
      .send({ user: { id }, text: 'hello there' })
      .expect(200);
    expect(res.body).toEqual({
      conversation: id,
      replies: ['HI THERE! HOW IS YOUR DAY GOING?'],
      metadata: { via: 'shout', agent: 'shout-client/1' },
    });
    const tracker = await request(t.url).get(`/conversations/${id}/tracker`).expect(200);
    expect(tracker.body.latest_input_channel).toBe('shout');
    expect(tracker.body.latest_message.text).toBe('hello there');
  });
});
