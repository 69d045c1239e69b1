import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import request from 'supertest';
import { trainMoodbot } from 'test/utils/channels';
import { startTestApp, uniqueId, type TestApp } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';

const RAW = `query Raw($input: RawConversationsInput!) {
  rawConversations(input: $input) { count conversations { id conversationEvents } }
}`;

type Event = Record<string, unknown> & { event: string; metadata?: Record<string, unknown> };

/**
 * Conversations produced by real dialogue turns — the moodbot answering on the REST webhook —
 * are what the GraphQL API reads: every stored event verbatim, in order, stamped with the
 * model id and the assistant id of the moodbot's config.yml.
 */
describe('GraphQL over conversations held through the REST channel', () => {
  let idp: TestIdp;
  let t: TestApp;
  let token: string;
  let models: string;

  beforeAll(async () => {
    models = trainMoodbot();
    idp = await startTestIdp();
    t = await startTestApp({
      env: { OIDC_ISSUER_URL: idp.issuer, PARLEY_MODEL: models },
      withDomain: false,
    });
    token = await fetchToken(idp);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await idp?.close();
    if (models) rmSync(dirname(models), { recursive: true, force: true });
  });

  it('lists the conversation with its user, action and bot events', async () => {
    const sender = uniqueId('gql-webhook');
    const since = new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const hi = await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: 'hi' })
      .expect(200);
    expect(hi.body[0]).toMatchObject({
      recipient_id: sender,
      text: 'Hi there! How is your day going?',
    });
    await request(t.url)
      .post('/webhooks/rest/webhook')
      .send({ sender, message: 'I am very sad' })
      .expect(200);
    const status = await request(t.url).get('/status').expect(200);
    const modelId = status.body.model_id as string;

    const page = await graphql(t.url, token, RAW, {
      input: { assistantId: 'parley_mood', fromTime: since, limit: 50 },
    });
    expect(page.status).toBe(200);
    expect(page.body.errors).toBeUndefined();
    const data = page.body.data?.rawConversations as {
      count: number;
      conversations: Array<{ id: string; conversationEvents: Event[] }>;
    };
    const conversation = data.conversations.find((c) => c.id === sender);
    expect(conversation).toBeDefined();
    const events = conversation!.conversationEvents;

    // The stored tracker, verbatim: the same events in the same order as the REST tracker route.
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    expect(events.map((e) => e.event)).toEqual(
      (tracker.body.events as Event[]).map((e) => e.event),
    );
    const users = events.filter((e) => e.event === 'user');
    expect(users.map((e) => e.text)).toEqual(['hi', 'I am very sad']);
    expect(users.map((e) => (e.parse_data as { intent: { name: string } }).intent.name)).toEqual([
      'greet',
      'mood_unhappy',
    ]);
    const bots = events.filter((e) => e.event === 'bot').map((e) => e.text);
    expect(bots).toContain('Hi there! How is your day going?');
    expect(bots).toContain('Maybe this picture brightens it up:');
    expect(events.filter((e) => e.event === 'action').map((e) => e.name)).toEqual(
      expect.arrayContaining(['action_session_start', 'utter_greet', 'utter_cheer_up']),
    );
    for (const event of events) expect(event.sender_id).toBe(sender);
    for (const event of [...users, ...events.filter((e) => e.event === 'bot')]) {
      expect(event.metadata).toMatchObject({ model_id: modelId, assistant_id: 'parley_mood' });
    }
  });
});
