import { createHmac } from 'node:crypto';
import request from 'supertest';
import {
  credentialsFile,
  expectFailure,
  MOODBOT_GREETING as GREETING,
  removeTempDirs,
  trainMoodbot,
  userEvents,
} from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';
import {
  BF_METADATA_PATH,
  BF_TOKEN_PATH,
  type FakeBotFramework,
  startFakeBotFramework,
} from 'test/utils/fake-botframework';
import {
  type FakeGoogleChat,
  GOOGLE_CHAT_CERTS_PATH,
  googleChatKey,
  startFakeGoogleChat,
} from 'test/utils/fake-google-chat';
import { type FakeWebex, startFakeWebex, WEBEX_BOT_ID } from 'test/utils/fake-webex';

afterAll(removeTempDirs);

const BF_APP_ID = '0b5ad9f4-3f67-4a5e-9e0c-parley-test';
const BF_APP_PASSWORD = 'bf-app-password';
const WEBEX_TOKEN = 'webex-bot-access-token';
const WEBEX_SECRET = 'webex-webhook-secret';
const GOOGLE_PROJECT = '123456789012';
const IMAGE = 'https://images.example.org/parley/sunrise.jpg';
const CHEER_UP = 'Maybe this picture brightens it up:';
const DID_THAT_HELP = 'Did that lift your mood?';

/**
 * The Microsoft Bot Framework, Webex and Google Chat connectors with the mood bot through the
 * real dialogue engine: the platforms' documented webhook payloads go into a real Parley, and
 * fakes of each platform (real HTTP servers written from the public docs) verify nothing but
 * record the calls the bot's answers make and serve the keys the tokens are checked against.
 */
describe('Microsoft Bot Framework, Webex and Google Chat connectors (moodbot)', () => {
  let bf: FakeBotFramework;
  let webex: FakeWebex;
  let google: FakeGoogleChat;
  let t: TestApp;

  beforeAll(async () => {
    bf = await startFakeBotFramework();
    webex = await startFakeWebex(WEBEX_TOKEN);
    google = await startFakeGoogleChat();
    const credentials = credentialsFile(
      [
        'botframework:',
        `  app_id: ${BF_APP_ID}`,
        `  app_password: ${BF_APP_PASSWORD}`,
        `  openid_metadata_url: ${bf.url}${BF_METADATA_PATH}`,
        `  login_url: ${bf.url}${BF_TOKEN_PATH}`,
        'webexteams:',
        `  access_token: ${WEBEX_TOKEN}`,
        `  webhook_secret: ${WEBEX_SECRET}`,
        `  api_url: ${webex.url}`,
        'hangouts:',
        `  project_id: ${GOOGLE_PROJECT}`,
        `  certs_url: ${google.url}${GOOGLE_CHAT_CERTS_PATH}`,
        '  hangouts_user_added_intent_name: /greet',
        '  hangouts_removed_intent_name: /goodbye',
        '',
      ].join('\n'),
    );
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: trainMoodbot() },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await bf?.close();
    await webex?.close();
    await google?.close();
  });

  it('serves a health route per connector', async () => {
    for (const name of ['botframework', 'webexteams', 'hangouts']) {
      const res = await request(t.url).get(`/webhooks/${name}/`).expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
    expect((await request(t.url).get('/webhooks/botframework/webhook')).status).toBe(404);
    expect((await request(t.url).get('/webhooks/webexteams/webhook')).status).toBe(404);
    expect((await request(t.url).get('/webhooks/hangouts/webhook')).status).toBe(404);
  });

  describe('botframework', () => {
    const bot = { id: '28:c9e8c047-2a74-40a2-b28a-b162d5f5327c', name: 'Parley Bot' };

    /** An activity as the Bot Connector posts it (Bot Framework Activity schema). */
    const activity = (user: string, conversation: string, text: string, extra = {}) => ({
      type: 'message',
      id: `${Date.now()}${Math.random().toString(36).slice(2, 8)}`,
      timestamp: new Date().toISOString(),
      serviceUrl: `${bf.url}/`,
      channelId: 'msteams',
      from: { id: user, name: 'Megan Bowen', aadObjectId: 'a1b2c3' },
      conversation: { id: conversation, conversationType: 'personal', tenantId: 't1' },
      recipient: bot,
      text,
      textFormat: 'plain',
      locale: 'en-US',
      ...extra,
    });

    const post = (body: unknown, token?: string) => {
      const req = request(t.url)
        .post('/webhooks/botframework/webhook')
        .set('Content-Type', 'application/json');
      if (token !== undefined) req.set('Authorization', `Bearer ${token}`);
      return req.send(typeof body === 'string' ? body : JSON.stringify(body));
    };

    /** What Rasa's BotFramework output channel posts around each part. */
    const reply = (user: string, part: Record<string, unknown>) => ({
      type: 'message',
      recipient: { id: user },
      from: bot,
      channelData: { notification: { alert: 'true' } },
      text: '',
      ...part,
    });

    beforeEach(() => (bf.platform.calls.length = 0));

    it('plays a moodbot turn: buttons as a hero card, then an image, with the app token', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      const res = await post(activity(user, conversation, 'hi'), bf.token(BF_APP_ID)).expect(200);
      expect(res.text).toBe('success');
      const hero = 'application/vnd.microsoft.card.hero';
      expect(bf.activities(conversation).map((c) => c.body)).toEqual([
        reply(user, {
          attachments: [
            { contentType: hero, content: { subtitle: GREETING.text, buttons: GREETING.buttons } },
          ],
        }),
      ]);
      const [sent] = bf.activities(conversation);
      expect(sent!.method).toBe('POST');
      expect(sent!.headers.authorization).toMatch(/^Bearer bf-access-token-\d+$/);
      expect(sent!.headers['content-type']).toMatch(/^application\/json/);
      // The app token: client credentials for the Bot Connector's scope, asked once.
      expect(bf.tokenCalls().map((c) => c.body)).toEqual([
        {
          grant_type: 'client_credentials',
          client_id: BF_APP_ID,
          client_secret: BF_APP_PASSWORD,
          scope: 'https://api.botframework.com/.default',
        },
      ]);
      expect(sent!.headers.authorization).toBe('Bearer bf-access-token-1');

      // The user clicks "not so good": Teams sends the button's value as the text.
      bf.platform.calls.length = 0;
      const attachments = [{ contentType: 'image/png', contentUrl: 'https://x.example/a.png' }];
      await post(
        activity(user, conversation, '/mood_unhappy', { attachments }),
        bf.token(BF_APP_ID),
      ).expect(200);
      expect(bf.activities(conversation).map((c) => c.body)).toEqual([
        reply(user, { text: CHEER_UP }),
        reply(user, {
          attachments: [{ contentType: hero, content: { images: [{ url: IMAGE }] } }],
        }),
        reply(user, { text: DID_THAT_HELP }),
      ]);
      // No second token for the second turn: it is kept until shortly before it expires.
      expect(bf.tokenCalls()).toHaveLength(0);

      const events = await userEvents(t.url, user);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'botframework'],
        ['/mood_unhappy', 'botframework'],
      ]);
      // Rasa's metadata: the activity's attachments, when it has any.
      expect(events[0]!.metadata).not.toHaveProperty('attachments');
      expect(events[1]!.metadata).toMatchObject({ attachments });
    });

    it('refuses a missing, forged, expired, misaddressed or misdirected token with 401 and runs no turn', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      const body = activity(user, conversation, 'hi');
      const now = Math.floor(Date.now() / 1000);
      const bad: Array<[string | undefined, string]> = [
        [undefined, 'no token'],
        ['not-a-jwt', 'not a JWT'],
        [bf.token(BF_APP_ID, {}, bf.foreignKey(bf.key.kid)), 'signed by another key, same kid'],
        [bf.token(BF_APP_ID, {}, bf.foreignKey('unknown-kid')), 'signed by an unknown key'],
        [bf.token(BF_APP_ID, { exp: now - 6 * 60, nbf: now - 3600 }), 'expired beyond skew'],
        [bf.token('another-app'), 'another audience'],
        [bf.token(BF_APP_ID, { iss: 'https://sts.windows.net/x/' }), 'another issuer'],
        [
          bf.token(BF_APP_ID, { serviceUrl: 'https://smba.trafficmanager.net/amer/' }),
          'other serviceUrl',
        ],
        [bf.token(BF_APP_ID, { serviceUrl: undefined }), 'no serviceUrl claim'],
      ];
      for (const [token, why] of bad) {
        const res = await post(body, token);
        expect([why, res.status]).toEqual([why, 401]);
        expectFailure(res, 401);
      }
      // Malformed JSON without a valid token is refused before it is parsed.
      expectFailure(await post('{"type": ', undefined), 401);
      // A key not endorsed for the activity's channel: 403, as Microsoft documents.
      expectFailure(await post({ ...body, channelId: 'skype' }, bf.token(BF_APP_ID)), 403);
      expect(bf.activities(conversation)).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('accepts a token that expired within the 5 minutes of clock skew', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      const now = Math.floor(Date.now() / 1000);
      const token = bf.token(BF_APP_ID, { exp: now - 60, nbf: now - 3600 });
      await post(activity(user, conversation, 'hi'), token).expect(200);
      expect(bf.activities(conversation)).toHaveLength(1);
    });

    it('answers other activity types without a turn', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      const update = { ...activity(user, conversation, ''), type: 'conversationUpdate' };
      const res = await post(update, bf.token(BF_APP_ID)).expect(200);
      expect(res.text).toBe('success');
      expect(bf.activities(conversation)).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('replays the first answer to a redelivered activity (same id) without a second turn', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      const body = activity(user, conversation, 'hi');
      await post(body, bf.token(BF_APP_ID)).expect(200);
      const again = await post(body, bf.token(BF_APP_ID)).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(bf.activities(conversation)).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('waits out Retry-After once when the Bot Connector answers 429, then delivers', async () => {
      const user = uniqueId('29:user');
      const conversation = uniqueId('a:conv');
      bf.platform.once(`/v3/conversations/${encodeURIComponent(conversation)}/activities`, {
        status: 429,
        headers: { 'Retry-After': '1' },
        body: { error: { code: 'TooManyRequests', message: 'slow down' } },
      });
      await post(activity(user, conversation, 'hi'), bf.token(BF_APP_ID)).expect(200);
      const sent = bf.activities(conversation).map((c) => c.body);
      expect(sent).toHaveLength(2);
      expect(sent[1]).toEqual(sent[0]);
    });
  });
  describe('webexteams', () => {
    const room = 'Y2lzY29zcGFyazovL3VzL1JPT00vZGlyZWN0LXBhcmxleQ';

    /** Webex's HMAC-SHA1 of the body with the webhook secret, hex. */
    const sparkSignature = (body: string, secret = WEBEX_SECRET) =>
      createHmac('sha1', secret).update(body).digest('hex');

    /** A message a user wrote, readable through the fake's Messages API. */
    const message = (person: string, text: string) => {
      const id = uniqueId('Y2lzY29zcGFyazovL3VzL01FU1NBR0U');
      webex.put({
        id,
        roomId: room,
        roomType: 'direct',
        personId: person,
        personEmail: 'ann@example.com',
        text,
        created: new Date().toISOString(),
      });
      return id;
    };

    /** The webhook delivery Webex posts for a created message: only its id. */
    const delivery = (messageId: string, person: string) =>
      JSON.stringify({
        id: 'Y2lzY29zcGFyazovL3VzL1dFQkhPT0svcGFybGV5',
        name: 'parley messages',
        targetUrl: 'https://bot.example.org/webhooks/webexteams/webhook',
        resource: 'messages',
        event: 'created',
        orgId: 'Y2lzY29zcGFyazovL3VzL09SR0FOSVpBVElPTi9vcmc',
        createdBy: WEBEX_BOT_ID,
        appId: 'Y2lzY29zcGFyazovL3VzL0FQUExJQ0FUSU9OL2FwcA',
        ownedBy: 'creator',
        status: 'active',
        actorId: person,
        data: {
          id: messageId,
          roomId: room,
          roomType: 'direct',
          personId: person,
          personEmail: 'ann@example.com',
          created: new Date().toISOString(),
        },
      });

    const post = (body: string, signature?: string) => {
      const req = request(t.url)
        .post('/webhooks/webexteams/webhook')
        .set('Content-Type', 'application/json');
      if (signature !== undefined) req.set('X-Spark-Signature', signature);
      return req.send(body);
    };

    beforeEach(() => (webex.platform.calls.length = 0));

    it('plays a moodbot turn: reads the message, answers in its room (buttons as lines, the image as a file)', async () => {
      const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
      const body = delivery(message(person, 'hi'), person);
      const res = await post(body, sparkSignature(body)).expect(200);
      expect(res.text).toBe('');
      expect(webex.platform.calls.map((c) => [c.method, c.path])).toEqual([
        ['GET', expect.stringMatching(/^\/v1\/messages\/Y2lz/)],
        ['GET', '/v1/people/me'],
        ['POST', '/v1/messages'],
        ['POST', '/v1/messages'],
        ['POST', '/v1/messages'],
      ]);
      for (const call of webex.platform.calls) {
        expect(call.headers.authorization).toBe(`Bearer ${WEBEX_TOKEN}`);
      }
      expect(webex.posted().map((c) => c.body)).toEqual([
        { roomId: room, text: GREETING.text },
        { roomId: room, text: '1: good (/mood_great)' },
        { roomId: room, text: '2: not so good (/mood_unhappy)' },
      ]);

      webex.platform.calls.length = 0;
      const second = delivery(message(person, '/mood_unhappy'), person);
      await post(second, sparkSignature(second)).expect(200);
      expect(webex.posted().map((c) => c.body)).toEqual([
        { roomId: room, text: CHEER_UP },
        { roomId: room, files: [IMAGE] },
        { roomId: room, text: DID_THAT_HELP },
      ]);
      // The bot's id is asked once.
      expect(webex.platform.calls.filter((c) => c.path === '/v1/people/me')).toEqual([]);
      const events = await userEvents(t.url, person);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'webexteams'],
        ['/mood_unhappy', 'webexteams'],
      ]);
    });

    it("does not answer the bot's own messages", async () => {
      const body = delivery(message(WEBEX_BOT_ID, 'Hi there!'), WEBEX_BOT_ID);
      const res = await post(body, sparkSignature(body)).expect(200);
      expect(res.text).toBe('OK');
      expect(webex.posted()).toEqual([]);
      expect(await userEvents(t.url, WEBEX_BOT_ID)).toEqual([]);
    });

    it('refuses a missing, wrong or misplaced signature with 401, before reading the message', async () => {
      const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
      const body = delivery(message(person, 'hi'), person);
      expectFailure(await post(body), 401);
      expectFailure(await post(body, sparkSignature(body, 'not-the-secret')), 401);
      expectFailure(await post(body, sparkSignature(delivery('other', person))), 401);
      expectFailure(
        await post(body, createHmac('sha256', WEBEX_SECRET).update(body).digest('hex')),
        401,
      );
      expectFailure(await post('{"data": ', undefined), 401);
      expect(webex.platform.calls).toEqual([]);
      expect(await userEvents(t.url, person)).toEqual([]);
    });

    it('answers a delivery of an unknown message with a 400 failure body and no turn', async () => {
      const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
      const body = delivery('Y2lzY29zcGFyazovL3VzL01FU1NBR0Uvbm9uZQ', person);
      expectFailure(await post(body, sparkSignature(body)), 400);
      expect(webex.posted()).toEqual([]);
      expect(await userEvents(t.url, person)).toEqual([]);
    });

    it('replays the first answer to a redelivery of the same message without a second turn', async () => {
      const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
      const body = delivery(message(person, 'hi'), person);
      await post(body, sparkSignature(body)).expect(200);
      const again = await post(body, sparkSignature(body)).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(webex.posted()).toHaveLength(3);
      expect((await userEvents(t.url, person)).map((e) => e.text)).toEqual(['hi']);
    });

    it('waits out Retry-After once when Webex answers 429, then delivers', async () => {
      webex.platform.once('/v1/messages', {
        status: 429,
        headers: { 'Retry-After': '1' },
        body: { message: 'Too Many Requests' },
      });
      const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
      const body = delivery(message(person, 'hi'), person);
      await post(body, sparkSignature(body)).expect(200);
      expect(webex.posted().map((c) => (c.body as { text: string }).text)).toEqual([
        GREETING.text,
        GREETING.text,
        '1: good (/mood_great)',
        '2: not so good (/mood_unhappy)',
      ]);
    });
  });
  describe('hangouts', () => {
    const dm = { name: 'spaces/AAAAdm', type: 'DM', displayName: '' };
    const room = { name: 'spaces/AAAAroom', type: 'ROOM', displayName: 'Team Mood' };
    const user = (displayName: string) => ({
      name: 'users/12345678901234567890',
      displayName,
      email: 'ann@example.com',
      type: 'HUMAN',
    });

    /** A MESSAGE event as Google Chat posts it. */
    const messageEvent = (name: string, text: string, space = dm) => ({
      type: 'MESSAGE',
      eventTime: new Date().toISOString(),
      space,
      user: user(name),
      message: {
        name: `${space.name}/messages/${uniqueId('m')}`,
        sender: user(name),
        createTime: new Date().toISOString(),
        text,
        argumentText: text,
        thread: { name: `${space.name}/threads/t1` },
        space,
      },
    });

    const post = (body: unknown, token?: string) => {
      const req = request(t.url)
        .post('/webhooks/hangouts/webhook')
        .set('Content-Type', 'application/json');
      if (token !== undefined) req.set('Authorization', `Bearer ${token}`);
      return req.send(typeof body === 'string' ? body : JSON.stringify(body));
    };

    const textCard = (text: string) => ({ sections: [{ widgets: [{ textParagraph: { text } }] }] });

    it('plays a moodbot turn: the answer is the Google Chat message, buttons and the image as cards', async () => {
      const name = uniqueId('Ann');
      const res = await post(messageEvent(name, 'hi'), google.token(GOOGLE_PROJECT)).expect(200);
      expect(res.body).toEqual({
        cards: [
          {
            sections: [
              {
                widgets: [
                  { textParagraph: { text: GREETING.text } },
                  {
                    buttons: GREETING.buttons.map((b) => ({
                      textButton: {
                        text: b.title,
                        onClick: { action: { actionMethodName: b.payload } },
                      },
                    })),
                  },
                ],
              },
            ],
          },
        ],
      });

      // The user clicks "not so good": Google Chat sends CARD_CLICKED with the action name.
      const click = {
        type: 'CARD_CLICKED',
        eventTime: new Date().toISOString(),
        space: dm,
        user: user(name),
        action: { actionMethodName: '/mood_unhappy', parameters: [] },
        message: { name: 'spaces/AAAAdm/messages/bot1' },
      };
      const clicked = await post(click, google.token(GOOGLE_PROJECT)).expect(200);
      // Text then a card: every part becomes a card, in order (Rasa's _persist_message).
      expect(clicked.body).toEqual({
        cards: [
          textCard(CHEER_UP),
          { sections: [{ widgets: [{ image: { imageUrl: IMAGE } }] }] },
          textCard(DID_THAT_HELP),
        ],
      });

      const events = await userEvents(t.url, name);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'hangouts'],
        ['/mood_unhappy', 'hangouts'],
      ]);
      expect(events[0]!.metadata).toMatchObject({ room: null });
      // The certificates were read once.
      expect(google.platform.calls.filter((c) => c.path === GOOGLE_CHAT_CERTS_PATH)).toHaveLength(
        1,
      );
    });

    it('answers texts alone as one text message, with the room as metadata', async () => {
      const name = uniqueId('Ann');
      const res = await post(
        messageEvent(name, '/bot_challenge', room),
        google.token(GOOGLE_PROJECT),
      ).expect(200);
      expect(res.body).toEqual({ text: 'I am a bot, built with Parley.' });
      const [event] = await userEvents(t.url, name);
      expect(event!.metadata).toMatchObject({ room: 'Team Mood' });
    });

    it('turns added and removed events into the configured intents', async () => {
      const name = uniqueId('Ann');
      const added = await post(
        {
          type: 'ADDED_TO_SPACE',
          eventTime: new Date().toISOString(),
          space: dm,
          user: user(name),
        },
        google.token(GOOGLE_PROJECT),
      ).expect(200);
      expect(added.body.cards[0].sections[0].widgets[0]).toEqual({
        textParagraph: { text: GREETING.text },
      });
      const removed = await post(
        {
          type: 'REMOVED_FROM_SPACE',
          eventTime: new Date().toISOString(),
          space: dm,
          user: user(name),
        },
        google.token(GOOGLE_PROJECT),
      ).expect(200);
      expect(removed.body).toEqual({ text: 'See you later!' });
      const inRoom = uniqueId('Bob');
      await post(
        {
          type: 'ADDED_TO_SPACE',
          eventTime: new Date().toISOString(),
          space: room,
          user: user(inRoom),
        },
        google.token(GOOGLE_PROJECT),
      ).expect(200);
      expect((await userEvents(t.url, name)).map((e) => e.text)).toEqual(['/greet', '/goodbye']);
      expect((await userEvents(t.url, inRoom)).map((e) => e.text)).toEqual(['/room_added']);
    });

    it('refuses a missing, forged, expired, misaddressed or foreign-issued token with 401 and runs no turn', async () => {
      const name = uniqueId('Ann');
      const body = messageEvent(name, 'hi');
      const now = Math.floor(Date.now() / 1000);
      const other = googleChatKey(google.key.kid);
      const bad: Array<[string | undefined, string]> = [
        [undefined, 'no token'],
        ['not-a-jwt', 'not a JWT'],
        [google.token(GOOGLE_PROJECT, {}, other), 'signed by another key, same kid'],
        [google.token(GOOGLE_PROJECT, {}, { ...other, kid: 'unknown' }), 'unknown key'],
        [google.token(GOOGLE_PROJECT, { exp: now - 120, iat: now - 3720 }), 'expired'],
        [google.token('999999999999'), 'another project'],
        [google.token(GOOGLE_PROJECT, { iss: 'accounts.google.com' }), 'another issuer'],
      ];
      for (const [token, why] of bad) {
        const res = await post(body, token);
        expect([why, res.status]).toEqual([why, 401]);
        expectFailure(res, 401);
      }
      expectFailure(await post('{"type": ', undefined), 401);
      expect(await userEvents(t.url, name)).toEqual([]);
    });

    it('replays the first answer to a redelivered message (same name) without a second turn', async () => {
      const name = uniqueId('Ann');
      const body = messageEvent(name, '/bot_challenge');
      const first = await post(body, google.token(GOOGLE_PROJECT)).expect(200);
      const again = await post(body, google.token(GOOGLE_PROJECT)).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await userEvents(t.url, name)).map((e) => e.text)).toEqual(['/bot_challenge']);
    });
  });
});

/**
 * Without `webhook_secret` (webexteams) and `project_id` (hangouts), deliveries are taken
 * unauthenticated, as Rasa takes them: the documented compatibility choice, warned at start.
 */
describe('webexteams and hangouts without a secret or project (Rasa unauthenticated mode)', () => {
  let webex: FakeWebex;
  let t: TestApp;

  beforeAll(async () => {
    webex = await startFakeWebex(WEBEX_TOKEN);
    const credentials = credentialsFile(
      [
        'webexteams:',
        `  access_token: ${WEBEX_TOKEN}`,
        '  room: Y2lzY29zcGFyazovL3VzL1JPT00vZml4ZWQ',
        `  api_url: ${webex.url}`,
        'hangouts:',
        '',
      ].join('\n'),
    );
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: trainMoodbot() },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await webex?.close();
  });

  it('webexteams: takes an unsigned delivery and answers in the configured room', async () => {
    const person = uniqueId('Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hbm4');
    const id = uniqueId('Y2lzY29zcGFyazovL3VzL01FU1NBR0U');
    webex.put({
      id,
      roomId: 'Y2lzY29zcGFyazovL3VzL1JPT00vZGlyZWN0',
      roomType: 'direct',
      personId: person,
      personEmail: 'ann@example.com',
      text: '/bot_challenge',
      created: new Date().toISOString(),
    });
    const body = JSON.stringify({ resource: 'messages', event: 'created', data: { id } });
    await request(t.url)
      .post('/webhooks/webexteams/webhook')
      .set('Content-Type', 'application/json')
      .send(body)
      .expect(200);
    expect(webex.posted().map((c) => c.body)).toEqual([
      { roomId: 'Y2lzY29zcGFyazovL3VzL1JPT00vZml4ZWQ', text: 'I am a bot, built with Parley.' },
    ]);
  });

  it('hangouts: takes an event without a token', async () => {
    const name = uniqueId('Ann');
    const res = await request(t.url)
      .post('/webhooks/hangouts/webhook')
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify({
          type: 'MESSAGE',
          space: { name: 'spaces/x', type: 'DM' },
          user: { displayName: name },
          message: { name: 'spaces/x/messages/1', sender: { displayName: name }, text: 'bye' },
        }),
      )
      .expect(200);
    expect(res.body).toEqual({ text: 'See you later!' });
    expect((await userEvents(t.url, name)).map((e) => e.text)).toEqual(['bye']);
  });
});
