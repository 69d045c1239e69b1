import request from 'supertest';
import {
  credentialsFile,
  MOODBOT_GREETING as GREETING,
  type ReceivingServer,
  removeTempDirs,
  startReceivingServer,
  trainMoodbot,
} from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

/**
 * The callback channel with the moodbot through the real dialogue engine: the webhook answers
 * `success`, and every bot message is POSTed to a real HTTP server on loopback.
 */
describe('callback channel (moodbot)', () => {
  let receiver: ReceivingServer;
  let t: TestApp;
  let models: string;

  beforeAll(async () => {
    receiver = await startReceivingServer();
    models = trainMoodbot();
    const credentials = credentialsFile(
      `callback:\n  url: ${receiver.url}/bot?via=parley\n  token: s3cret\n  headers:\n    X-Bot: moodbot\n`,
    );
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: models },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  beforeEach(() => {
    receiver.received.length = 0;
    receiver.status = 200;
  });

  it('answers success and POSTs the greeting, with its buttons, to the callback URL', async () => {
    const sender = uniqueId('cb');
    const res = await request(t.url)
      .post('/webhooks/callback/webhook')
      .send({ sender, message: 'hi' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('success');
    expect(receiver.received).toHaveLength(1);
    const post = receiver.received[0]!;
    expect(post.method).toBe('POST');
    expect(new URL(post.url, receiver.url).searchParams.get('via')).toBe('parley');
    expect(new URL(post.url, receiver.url).searchParams.get('token')).toBe('s3cret');
    expect(post.headers['content-type']).toBe('application/json');
    expect(post.headers['x-bot']).toBe('moodbot');
    expect(post.body).toEqual({ recipient_id: sender, ...GREETING });

    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    expect(tracker.body.latest_input_channel).toBe('callback');
  });

  it('POSTs each message of the unhappy path in order: text, image, question', async () => {
    const sender = uniqueId('cb');
    await request(t.url)
      .post('/webhooks/callback/webhook')
      .send({ sender, message: 'hello' })
      .expect(200, 'success');
    receiver.received.length = 0;
    await request(t.url)
      .post('/webhooks/callback/webhook')
      .send({ sender, message: '/mood_unhappy' })
      .expect(200, 'success');
    expect(receiver.received.map((r) => r.body)).toEqual([
      { recipient_id: sender, text: 'Maybe this picture brightens it up:' },
      { recipient_id: sender, image: 'https://images.example.org/parley/sunrise.jpg' },
      { recipient_id: sender, text: 'Did that lift your mood?' },
    ]);
  });

  it('sends trigger_intent answers to the callback with output_channel=callback', async () => {
    const sender = uniqueId('cb');
    const res = await request(t.url)
      .post(`/conversations/${sender}/trigger_intent?output_channel=callback`)
      .send({ name: 'greet' })
      .expect(200);
    expect(receiver.received.map((r) => r.body)).toEqual([{ recipient_id: sender, ...GREETING }]);
    // Rasa's CallbackOutput is a collecting channel, so the messages are also returned.
    expect(res.body.messages).toEqual([{ recipient_id: sender, ...GREETING }]);
  });

  it('logs a failing callback server and keeps going', async () => {
    receiver.status = 500;
    const sender = uniqueId('cb');
    await request(t.url)
      .post('/webhooks/callback/webhook')
      .send({ sender, message: '/greet' })
      .expect(200, 'success');
    expect(receiver.received).toHaveLength(1);
    // The turn was stored, and the next one is answered normally.
    receiver.status = 200;
    receiver.received.length = 0;
    await request(t.url)
      .post('/webhooks/callback/webhook')
      .send({ sender, message: '/mood_great' })
      .expect(200, 'success');
    expect(receiver.received.map((r) => r.body)).toEqual([
      { recipient_id: sender, text: 'Glad to hear it. Keep it up!' },
    ]);
  });

  it('survives an unreachable callback URL', async () => {
    const down = credentialsFile('callback:\n  url: http://127.0.0.1:9/nothing-listens\n');
    const other = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: down, PARLEY_MODEL: models },
    });
    try {
      await request(other.url)
        .post('/webhooks/callback/webhook')
        .send({ sender: uniqueId('cb'), message: '/greet' })
        .expect(200, 'success');
    } finally {
      await other.close();
    }
  });
});
