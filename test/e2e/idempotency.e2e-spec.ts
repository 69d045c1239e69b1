import request from 'supertest';
import {
  credentialsFile,
  type ReceivingServer,
  removeTempDirs,
  startReceivingServer,
  trainMoodbot,
} from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

type Event = Record<string, unknown>;

/**
 * Idempotent ingress (draft-ietf-httpapi-idempotency-key-header) on the REST and callback
 * webhooks and `POST /conversations/{id}/messages`, with the moodbot through the real dialogue
 * engine and keys in the real PostgreSQL.
 */
describe('idempotent ingress', () => {
  let receiver: ReceivingServer;
  let t: TestApp;

  beforeAll(async () => {
    receiver = await startReceivingServer();
    const credentials = credentialsFile(`callback:\n  url: ${receiver.url}/bot\n`);
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: trainMoodbot() },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const userEvents = async (sender: string): Promise<Event[]> => {
    const res = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    return (res.body.events as Event[]).filter((e) => e.event === 'user');
  };

  it('10 concurrent identical posts run one turn: the others get 409 or the replay', async () => {
    const sender = uniqueId('idem');
    const key = uniqueId('key');
    const post = () =>
      request(t.url)
        .post('/webhooks/rest/webhook')
        .set('Idempotency-Key', key)
        .send({ sender, message: 'hello' });
    const answers = await Promise.all(Array.from({ length: 10 }, post));

    const ok = answers.filter((a) => a.status === 200);
    const busy = answers.filter((a) => a.status === 409);
    expect(ok.length + busy.length).toBe(10);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) expect(a.body).toEqual(ok[0]!.body);
    for (const a of busy) {
      expect(a.body).toMatchObject({ status: 'failure', reason: 'Conflict', code: 409 });
      expect(a.headers['retry-after']).toBe('1');
    }
    expect(ok[0]!.body).toEqual([expect.objectContaining({ recipient_id: sender })]);
    expect(await userEvents(sender)).toHaveLength(1);

    // Later repeats replay the first answer: same status and body, and no new turn.
    const again = await post().expect(200);
    expect(again.body).toEqual(ok[0]!.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(await userEvents(sender)).toHaveLength(1);
  });

  it('the same key with a different payload is 422 and runs nothing', async () => {
    const sender = uniqueId('idem');
    const key = uniqueId('key');
    await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Idempotency-Key', key)
      .send({ sender, message: 'hello' })
      .expect(200);
    const res = await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Idempotency-Key', key)
      .send({ sender, message: 'I am sad' })
      .expect(422);
    expect(res.body).toMatchObject({
      version: expect.any(String),
      status: 'failure',
      reason: 'UnprocessableEntity',
      code: 422,
      message: expect.stringContaining('different payload'),
    });
    expect(await userEvents(sender)).toHaveLength(1);
  });

  it('a body message_id is the key without a header, and becomes the user event id', async () => {
    const sender = uniqueId('idem');
    const body = { sender, message: 'hello', message_id: 'm-0001' };
    const first = await request(t.url).post('/webhooks/rest/webhook').send(body).expect(200);
    const second = await request(t.url).post('/webhooks/rest/webhook').send(body).expect(200);
    expect(second.body).toEqual(first.body);
    const users = await userEvents(sender);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ message_id: 'm-0001' });
  });

  it('keys are scoped per sender: two users with the same key each get their turn', async () => {
    const key = uniqueId('shared');
    const a = uniqueId('idem-a');
    const b = uniqueId('idem-b');
    for (const sender of [a, b]) {
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .set('Idempotency-Key', key)
        .send({ sender, message: 'hello' })
        .expect(200);
    }
    expect(await userEvents(a)).toHaveLength(1);
    expect(await userEvents(b)).toHaveLength(1);
  });

  it('a bad key or message_id is a 400 naming it', async () => {
    const sender = uniqueId('idem');
    const long = await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Idempotency-Key', 'k'.repeat(300))
      .send({ sender, message: 'hello' })
      .expect(400);
    expect(long.body.details).toMatchObject({ parameter: 'Idempotency-Key' });
    const id = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: 'hello', message_id: 42 })
      .expect(400);
    expect(id.body.details).toMatchObject({ parameter: 'message_id' });
    expect(await userEvents(sender)).toHaveLength(0);
  });

  it('a quoted structured-field key is the same key as the bare one', async () => {
    const sender = uniqueId('idem');
    const key = uniqueId('key');
    await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Idempotency-Key', `"${key}"`)
      .send({ sender, message: 'hello' })
      .expect(200);
    const again = await request(t.url)
      .post('/webhooks/rest/webhook')
      .set('Idempotency-Key', key)
      .send({ sender, message: 'hello' })
      .expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await userEvents(sender)).toHaveLength(1);
  });

  it('the callback webhook replays `success` and posts the bot messages once', async () => {
    const sender = uniqueId('idem');
    receiver.received.length = 0;
    const post = () =>
      request(t.url)
        .post('/webhooks/callback/webhook')
        .set('Idempotency-Key', 'cb-1')
        .send({ sender, message: 'hello' });
    const first = await post().expect(200);
    const second = await post().expect(200);
    expect(first.text).toBe('success');
    expect(second.text).toBe('success');
    expect(second.headers['content-type']).toMatch(/^text\/plain/);
    expect(await userEvents(sender)).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('POST /conversations/{id}/messages replays the tracker it answered', async () => {
    const sender = uniqueId('idem');
    const post = () =>
      request(t.url)
        .post(`/conversations/${sender}/messages`)
        .set('Idempotency-Key', 'msg-1')
        .send({ text: 'hello', sender: 'user', message_id: 'ext-7' });
    const first = await post().expect(200);
    const second = await post().expect(200);
    expect(second.body).toEqual(first.body);
    const users = await userEvents(sender);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ message_id: 'ext-7' });
  });

  it('without a key, identical posts are separate messages (as in Rasa)', async () => {
    const sender = uniqueId('idem');
    for (let i = 0; i < 2; i++) {
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .send({ sender, message: 'hello' })
        .expect(200);
    }
    expect(await userEvents(sender)).toHaveLength(2);
  });
});

describe('idempotency keys expire', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { IDEMPOTENCY_RETENTION_SECONDS: '1' } });
  }, 60_000);
  afterAll(async () => t?.close());

  it('after the retention window the same key runs again', async () => {
    const sender = uniqueId('idem');
    const post = () =>
      request(t.url)
        .post(`/conversations/${sender}/messages`)
        .set('Idempotency-Key', 'short')
        .send({ text: 'hello', sender: 'user' });
    await post().expect(200);
    expect((await post().expect(200)).headers['idempotent-replayed']).toBe('true');
    await new Promise((r) => setTimeout(r, 1200));
    const fresh = await post().expect(200);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    expect((tracker.body.events as Event[]).filter((e) => e.event === 'user')).toHaveLength(2);
  });
});
