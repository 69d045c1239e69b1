import { io } from 'socket.io-client';
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
import { FakeJambonzCall } from 'test/utils/fake-jambonz';
import { actionCallback, outgoingWebhook, startFakeMattermost } from 'test/utils/fake-mattermost';
import { type FakePlatform } from 'test/utils/fake-platform';
import {
  type FakeRocketChat,
  outgoingMessage,
  startFakeRocketChat,
} from 'test/utils/fake-rocketchat';
import { WebSocket } from 'ws';

afterAll(removeTempDirs);

const IMAGE = 'https://images.example.org/parley/sunrise.jpg';
const CHEER_UP = 'Maybe this picture brightens it up:';
const DID_THAT_HELP = 'Did that lift your mood?';

const MM_TOKEN = 'mattermost-bot-access-token';
const MM_WEBHOOK_TOKEN = 'mattermost-outgoing-webhook-token';
const MM_WEBHOOK_URL = 'https://bot.example.org/webhooks/mattermost/webhook';
const RC_USER = 'parley_bot';
const RC_PASSWORD = 'rocket-chat-bot-password';
const RC_TOKEN = 'rocketchat-integration-token';
const AC_TOKEN = 'audiocodes-bot-token';
const JB_USER = 'jambonz';
const JB_PASSWORD = 'jambonz-basic-auth-password';
const JB_AUTH = {
  Authorization: `Basic ${Buffer.from(`${JB_USER}:${JB_PASSWORD}`).toString('base64')}`,
};

/**
 * Rasa's mattermost, rocketchat, audiocodes and jambonz connectors with the mood bot through
 * the real dialogue engine: each platform's documented requests go into a real Parley, and a
 * fake of each platform's API (a real HTTP server) records what the bot's answers call.
 */
describe('chat and voice connectors (moodbot)', () => {
  let mattermost: FakePlatform;
  let rocket: FakeRocketChat;
  let t: TestApp;
  let models: string;

  beforeAll(async () => {
    mattermost = await startFakeMattermost();
    rocket = await startFakeRocketChat(RC_USER, RC_PASSWORD);
    const credentials = credentialsFile(
      [
        'mattermost:',
        `  url: ${mattermost.url}/api/v4`,
        `  token: ${MM_TOKEN}`,
        `  webhook_url: ${MM_WEBHOOK_URL}`,
        `  webhook_token: ${MM_WEBHOOK_TOKEN}`,
        'rocketchat:',
        `  user: ${RC_USER}`,
        `  password: ${RC_PASSWORD}`,
        `  server_url: ${rocket.platform.url}`,
        `  webhook_token: ${RC_TOKEN}`,
        'audiocodes:',
        `  token: ${AC_TOKEN}`,
        '  use_websocket: false',
        '  keep_alive: 60',
        'socketio:',
        '  session_persistence: true',
        'jambonz:',
        `  username: ${JB_USER}`,
        `  password: ${JB_PASSWORD}`,
        '',
      ].join('\n'),
    );
    t = await startTestApp({
      withDomain: false,
      env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: (models = trainMoodbot()) },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await mattermost?.close();
    await rocket?.platform.close();
  });

  describe('mattermost', () => {
    const post = (body: unknown, type = 'application/json') =>
      request(t.url)
        .post('/webhooks/mattermost/webhook')
        .set('Content-Type', type)
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    const message = (userId: string, text: string, token = MM_WEBHOOK_TOKEN) =>
      outgoingWebhook({
        token,
        userId,
        channelId: `ch-${userId}`,
        text,
        triggerWord: '@parley',
        postId: uniqueId('p'),
      });

    beforeEach(() => (mattermost.calls.length = 0));

    it('serves the health route', async () => {
      const res = await request(t.url).get('/webhooks/mattermost/').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('plays a moodbot turn: buttons as an interactive attachment, then a click with an image', async () => {
      const user = uniqueId('u');
      const channel = `ch-${user}`;
      const res = await post(message(user, '@parley hi')).expect(200);
      expect(res.text).toBe('success');
      expect(mattermost.calls.map((c) => [c.method, c.path])).toEqual([['POST', '/api/v4/posts']]);
      expect(mattermost.calls[0]!.headers.authorization).toBe(`Bearer ${MM_TOKEN}`);
      expect(mattermost.calls[0]!.body).toEqual({
        channel_id: channel,
        message: GREETING.text,
        props: {
          attachments: [
            {
              actions: GREETING.buttons.map((b) => ({
                name: b.title,
                integration: {
                  url: MM_WEBHOOK_URL,
                  context: { action: b.payload, parley_signature: expect.any(String) },
                },
              })),
            },
          ],
        },
      });
      const [user1] = await userEvents(t.url, user);
      expect(user1).toMatchObject({ text: 'hi', input_channel: 'mattermost' });

      // The user clicks "not so good": Mattermost posts the button's context back.
      const posted = mattermost.calls[0]!.body as {
        props: { attachments: { actions: { integration: { context: unknown } }[] }[] };
      };
      const context = posted.props.attachments[0]!.actions[1]!.integration.context;
      mattermost.calls.length = 0;
      const click = await post(
        actionCallback({ userId: user, channelId: channel, postId: 'post1', context }),
      ).expect(200);
      expect(click.body).toEqual({});
      expect(mattermost.calls.map((c) => c.body)).toEqual([
        { channel_id: channel, message: CHEER_UP },
        { channel_id: channel, props: { attachments: [{ image_url: IMAGE }] } },
        { channel_id: channel, message: DID_THAT_HELP },
      ]);
      const events = await userEvents(t.url, user);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'mattermost'],
        ['/mood_unhappy', 'mattermost'],
      ]);
    });

    it('reads a form-encoded outgoing webhook, and a one-word post whole', async () => {
      const user = uniqueId('u');
      const form = new URLSearchParams(message(user, 'hello') as Record<string, string>).toString();
      await post(form, 'application/x-www-form-urlencoded').expect(200, 'success');
      expect(mattermost.calls).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hello']);
    });

    it('refuses a missing or wrong webhook token, and a click without a valid signature, with 401', async () => {
      const user = uniqueId('u');
      const noToken = message(user, '@parley hi');
      delete noToken.token;
      expectFailure(await post(noToken), 401);
      expectFailure(await post(message(user, '@parley hi', 'guess')), 401);
      // Neither a triggered post nor a click: still only with the token.
      expectFailure(await post({ user_id: user, channel_id: `ch-${user}`, text: 'hi' }), 401);
      const click = (context: unknown, channelId = `ch-${user}`) =>
        post(actionCallback({ userId: user, channelId, postId: 'p', context }));
      expectFailure(await click({ action: '/mood_great' }), 401);
      expectFailure(await click({ action: '/mood_great', parley_signature: 'forged' }), 401);
      // A genuine button's context, replayed with another action or in another channel.
      await post(message(user, '@parley hi')).expect(200);
      const posted = mattermost.calls[0]!.body as {
        props: {
          attachments: { actions: { integration: { context: Record<string, unknown> } }[] }[];
        };
      };
      const genuine = posted.props.attachments[0]!.actions[0]!.integration.context;
      mattermost.calls.length = 0;
      expectFailure(await click({ ...genuine, action: '/bot_challenge' }), 401);
      expectFailure(await click(genuine, 'ch-other'), 401);
      expect(mattermost.calls).toEqual([]);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('replays the first answer to a redelivered post (same post_id)', async () => {
      const user = uniqueId('u');
      const body = message(user, '@parley hi');
      await post(body).expect(200, 'success');
      const again = await post(body).expect(200, 'success');
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(mattermost.calls).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('answers hostile bodies with 4xx and runs no turn', async () => {
      expectFailure(await post('{"token": '), 400);
      expectFailure(await post('[1, 2]'), 400);
      const noUser = message('x', '@parley hi');
      delete noUser.user_id;
      expectFailure(await post(noUser), 400);
      const big = await post({ ...message('x', '@parley hi'), pad: 'x'.repeat(70 * 1024) });
      expect(big.status).toBe(413);
      expect((await request(t.url).get('/webhooks/mattermost/webhook')).status).toBe(404);
      expect(mattermost.calls).toEqual([]);
    });
  });
  describe('rocketchat', () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      request(t.url)
        .post('/webhooks/rocketchat/webhook')
        .set('Content-Type', 'application/json')
        .set(headers)
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    const message = (roomId: string, text: string, token = RC_TOKEN, userName = 'ann') =>
      outgoingMessage({ token, roomId, userName, text, messageId: uniqueId('m') });
    const posts = () =>
      rocket.platform.calls.filter((c) => c.path === '/api/v1/chat.postMessage').map((c) => c.body);

    beforeEach(() => (rocket.platform.calls.length = 0));

    it('plays a moodbot turn: buttons as attachment actions, then a button message with an image', async () => {
      const room = uniqueId('room');
      await post(message(room, 'hi')).expect(200, '');
      expect(posts()).toEqual([
        {
          roomId: room,
          text: GREETING.text,
          attachments: [
            {
              actions: GREETING.buttons.map((b) => ({
                text: b.title,
                msg: b.payload,
                type: 'button',
                msg_in_chat_window: true,
              })),
            },
          ],
        },
      ]);
      const sent = rocket.platform.calls.find((c) => c.path === '/api/v1/chat.postMessage')!;
      expect(sent.headers['x-user-id']).toBe(rocket.userId);
      expect(sent.headers['x-auth-token']).toMatch(/^auth-token-\d+$/);

      // A button with msg_in_chat_window posts its msg as the user.
      rocket.platform.calls.length = 0;
      await post(message(room, '/mood_unhappy')).expect(200, '');
      expect(posts()).toEqual([
        { roomId: room, text: CHEER_UP },
        { roomId: room, attachments: [{ image_url: IMAGE, collapsed: false }] },
        { roomId: room, text: DID_THAT_HELP },
      ]);
      const events = await userEvents(t.url, room);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'rocketchat'],
        ['/mood_unhappy', 'rocketchat'],
      ]);
    });

    it('logs in again when Rocket.Chat no longer takes the session, and delivers', async () => {
      rocket.expireTokens();
      const room = uniqueId('room');
      await post(message(room, 'hi')).expect(200);
      expect(rocket.platform.calls.map((c) => [c.path])).toEqual([
        ['/api/v1/chat.postMessage'],
        ['/api/v1/login'],
        ['/api/v1/chat.postMessage'],
      ]);
      expect(rocket.platform.calls[1]!.body).toEqual({ user: RC_USER, password: RC_PASSWORD });
    });

    it('ignores the bot user’s own messages', async () => {
      const room = uniqueId('room');
      await post(message(room, 'hi', RC_TOKEN, RC_USER)).expect(200, '');
      expect(rocket.platform.calls).toEqual([]);
      expect(await userEvents(t.url, room)).toEqual([]);
    });

    it('takes a livechat webhook with its secret token header', async () => {
      const room = uniqueId('room');
      const livechat = {
        _id: room,
        label: 'Ann',
        type: 'LivechatSession',
        visitor: { _id: 'v1', token: 'visitor-token', name: 'Ann', username: 'guest-1' },
        messages: [
          {
            _id: uniqueId('lm'),
            u: { _id: 'v1', username: 'guest-1' },
            username: 'guest-1',
            msg: 'hi',
            ts: '2026-11-28T12:00:00.000Z',
          },
        ],
      };
      expectFailure(await post(livechat), 401);
      expectFailure(await post(livechat, { 'X-RocketChat-Livechat-Token': 'guess' }), 401);
      await post(livechat, { 'X-RocketChat-Livechat-Token': RC_TOKEN }).expect(200, '');
      expect(posts()).toHaveLength(1);
      expect((await userEvents(t.url, room)).map((e) => e.text)).toEqual(['hi']);
    });

    it('refuses a missing or wrong integration token with 401 and runs no turn', async () => {
      const room = uniqueId('room');
      const noToken = message(room, 'hi');
      delete noToken.token;
      expectFailure(await post(noToken), 401);
      expectFailure(await post(message(room, 'hi', 'guess')), 401);
      expectFailure(await post(message(room, 'hi', `${RC_TOKEN}x`)), 401);
      expect(rocket.platform.calls).toEqual([]);
      expect(await userEvents(t.url, room)).toEqual([]);
    });

    it('answers hostile bodies with 4xx and runs no turn', async () => {
      expectFailure(await post('{"token": '), 400);
      expectFailure(await post('"just a string"'), 400);
      const noRoom = message('x', 'hi');
      delete noRoom.channel_id;
      expectFailure(await post(noRoom), 400);
      const big = await post({ ...message('x', 'hi'), pad: 'x'.repeat(70 * 1024) });
      expect(big.status).toBe(413);
      expect(rocket.platform.calls).toEqual([]);
    });

    it('sends trigger_intent answers to the room with output_channel=rocketchat', async () => {
      const room = uniqueId('room');
      await request(t.url)
        .post(`/conversations/${room}/trigger_intent?output_channel=rocketchat`)
        .send({ name: 'greet' })
        .expect(200);
      expect(posts()).toEqual([expect.objectContaining({ roomId: room, text: GREETING.text })]);
    });
  });
  describe('audiocodes', () => {
    const call = (path: string, body?: unknown, token: string | null = AC_TOKEN) => {
      const req = request(t.url).post(`/webhooks/audiocodes/${path}`);
      if (token !== null) req.set('Authorization', `Bearer ${token}`);
      if (body === undefined) return req;
      return req
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    };
    const open = async (): Promise<string> => {
      const id = uniqueId('ac');
      const res = await call('webhook', { conversation: id, id: 'x', timestamp: '2026' }).expect(
        200,
      );
      expect(res.body).toEqual({
        activitiesURL: `conversation/${id}/activities`,
        disconnectURL: `conversation/${id}/disconnect`,
        refreshURL: `conversation/${id}/keepalive`,
        expiresSeconds: 60,
      });
      return id;
    };
    let n = 0;
    const message = (text: string) => ({
      id: `act-${++n}`,
      timestamp: '2026-11-28T12:00:00.000Z',
      language: 'en-US',
      type: 'message',
      text,
      parameters: { confidence: 0.93, recognitionOutput: { RecognitionStatus: 'Success' } },
    });
    const said = (res: request.Response) =>
      (res.body.activities as Record<string, unknown>[]).map((a) => [a.type, a.name ?? a.text]);

    it('answers VoiceAI Connect’s check and refuses requests without the bot token', async () => {
      const ok = await request(t.url)
        .get('/webhooks/audiocodes/webhook')
        .set('Authorization', `Bearer ${AC_TOKEN}`)
        .expect(200);
      expect(ok.body).toEqual({ type: 'ac-bot-api', success: true });
      // Sanic's request.token also reads the `Token` scheme.
      await request(t.url)
        .get('/webhooks/audiocodes/webhook')
        .set('Authorization', `Token ${AC_TOKEN}`)
        .expect(200);
      expectFailure(await request(t.url).get('/webhooks/audiocodes/webhook'), 401);
      const id = uniqueId('ac');
      expectFailure(await call('webhook', { conversation: id }, null), 401);
      expectFailure(await call('webhook', { conversation: id }, 'guess'), 401);
      expectFailure(await call('webhook', { conversation: id }, `${AC_TOKEN}-and-more`), 401);
      // Nothing was created: its activities are not found even with the token.
      expectFailure(await call(`conversation/${id}/activities`, { activities: [] }), 404);
      const opened = await open();
      expectFailure(
        await call(`conversation/${opened}/activities`, { activities: [message('hi')] }, null),
        401,
      );
      expectFailure(
        await call(`conversation/${opened}/activities`, { activities: [message('hi')] }, 'guess'),
        401,
      );
      expect(await userEvents(t.url, opened)).toEqual([]);
    });

    it('plays a moodbot call: start, buttons said concisely, then a turn with an image left out', async () => {
      const id = await open();
      const start = await call(`conversation/${id}/activities`, {
        conversation: id,
        activities: [
          {
            id: `act-${++n}`,
            timestamp: '2026-11-28T12:00:00.000Z',
            type: 'event',
            name: 'start',
            parameters: {
              vaigConversationId: 'vaig-1',
              caller: '+15551230000',
              callee: '+15559870000',
              callerDisplayName: 'Ann',
              callerHost: 'sip.example.org',
              calleeHost: 'bot.example.org',
            },
          },
        ],
      }).expect(200);
      expect(start.body).toEqual({ conversation: id, activities: [] });

      const greet = await call(`conversation/${id}/activities`, {
        conversation: id,
        activities: [message('hi')],
      }).expect(200);
      expect(greet.body).toEqual({
        conversation: id,
        activities: [
          {
            type: 'message',
            text: 'Hi there! How is your day going? good, not so good',
            timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
            id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          },
        ],
      });
      const sad = await call(`conversation/${id}/activities`, {
        conversation: id,
        activities: [message('/mood_unhappy')],
      }).expect(200);
      expect(said(sad)).toEqual([
        ['message', CHEER_UP],
        ['message', DID_THAT_HELP],
      ]);
      const events = await userEvents(t.url, id);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['/session_start', 'audiocodes'],
        ['hi', 'audiocodes'],
        ['/mood_unhappy', 'audiocodes'],
      ]);
      expect(events[0]!.metadata).toMatchObject({
        call_id: 'vaig-1',
        user_phone: '+15551230000',
        bot_phone: '+15559870000',
        user_name: 'Ann',
        user_host: 'sip.example.org',
        bot_host: 'bot.example.org',
        direction: null,
        stream_id: null,
      });
      expect(events[1]!.metadata).toMatchObject({
        confidence: 0.93,
        recognitionOutput: { RecognitionStatus: 'Success' },
      });
    });

    it('skips an activity sent again, maps DTMF, and ends on disconnect', async () => {
      const id = await open();
      const hi = message('hi');
      await call(`conversation/${id}/activities`, { activities: [hi] }).expect(200);
      const again = await call(`conversation/${id}/activities`, { activities: [hi] }).expect(200);
      expect(again.body).toEqual({ conversation: id, activities: [] });
      await call(`conversation/${id}/activities`, {
        activities: [{ id: `act-${++n}`, type: 'event', name: 'DTMF', value: '1' }],
      }).expect(200);
      await call(`conversation/${id}/keepalive`, { conversation: id }).expect(200, {});
      await call(`conversation/${id}/disconnect`, {
        conversation: id,
        reasonCode: 'client-disconnected',
        reason: 'Client Side',
      }).expect(200, {});
      const events = await userEvents(t.url, id);
      expect(events.map((e) => [e.text, e.metadata])).toEqual([
        ['hi', expect.anything()],
        ['/vaig_event_DTMF', expect.objectContaining({ value: '1' })],
        ['/session_end', expect.objectContaining({ reason: 'Client Side' })],
      ]);
      // The conversation is over.
      expectFailure(await call(`conversation/${id}/keepalive`, {}), 404);
      expectFailure(await call(`conversation/${id}/activities`, { activities: [hi] }), 404);
    });

    it('answers hostile bodies with 4xx and runs no turn', async () => {
      const id = await open();
      expectFailure(await call('webhook', { conversation: id }), 400);
      expectFailure(await call('webhook', '{"conversation": '), 400);
      expectFailure(await call('webhook', { conversation: 42 }), 400);
      expectFailure(await call('webhook', { conversation: 'x'.repeat(10_000) }), 400);
      expectFailure(await call(`conversation/${id}/activities`, '{"activities": ['), 400);
      expectFailure(await call(`conversation/${id}/activities`, { activities: 'hi' }), 400);
      expectFailure(await call(`conversation/${id}/activities`, '[]'), 400);
      const big = await call(`conversation/${id}/activities`, {
        activities: [message('x'.repeat(70 * 1024))],
      });
      expect(big.status).toBe(413);
      expect(await userEvents(t.url, id)).toEqual([]);
    });
  });
  describe('jambonz', () => {
    const wsUrl = () => `${t.url.replace('http', 'ws')}/webhooks/jambonz/websocket`;
    const open = (callSid = uniqueId('call'), headers: Record<string, string> = JB_AUTH) =>
      FakeJambonzCall.connect(wsUrl(), callSid, headers);
    const gather = {
      verb: 'gather',
      input: ['speech', 'digits'],
      minDigits: 1,
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      actionHook: '/gather',
    };
    const say = (text: string) => ({ verb: 'say', text, id: expect.any(String) });

    it('plays a moodbot call: session:new, speech with buttons said, a turn with an image left out, the end of the call', async () => {
      const call = await open();
      expect(call.ws.protocol).toBe('ws.jambonz.org');
      const newId = call.sessionNew();
      expect(await call.next()).toEqual({ type: 'ack', msgid: newId, data: [gather] });

      const hiId = call.speech('hi');
      expect(await call.next()).toEqual({
        type: 'ack',
        msgid: hiId,
        data: [say('Hi there! How is your day going? good, not so good'), gather],
      });
      const sadId = call.speech('/mood_unhappy');
      expect(await call.next()).toEqual({
        type: 'ack',
        msgid: sadId,
        data: [say(CHEER_UP), say(DID_THAT_HELP), gather],
      });
      const silentId = call.gatherHook({ reason: 'timeout' });
      expect(await call.next()).toEqual({
        type: 'ack',
        msgid: silentId,
        data: [{ verb: 'say', text: "I'm sorry, I didn't catch that." }, gather],
      });
      const keysId = call.gatherHook({ reason: 'dtmfDetected', digits: '1' });
      expect(await call.next()).toMatchObject({ type: 'ack', msgid: keysId });
      call.completed();
      // The last turn is stored before the socket closes: ask for the tracker after a new ack.
      const otherId = call.send({ type: 'verb:hook', hook: '/other', data: {} });
      expect(await call.next()).toEqual({ type: 'ack', msgid: otherId });
      call.close();
      const events = await userEvents(t.url, call.callSid);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['/session_start', 'jambonz'],
        ['hi', 'jambonz'],
        ['/mood_unhappy', 'jambonz'],
        ['1', 'jambonz'],
        ['/session_end', 'jambonz'],
      ]);
      expect(events[0]!.metadata).toMatchObject({
        call_id: call.callSid,
        user_phone: '+15083084809',
        bot_phone: '+15083728299',
      });
    });

    it('shares the HTTP server’s upgrades with socket.io: both answer side by side', async () => {
      const socket = io(t.url, { path: '/socket.io', transports: ['websocket'], forceNew: true });
      try {
        const sessionId = uniqueId('sio');
        const confirmed = new Promise((resolve) => socket.once('session_confirm', resolve));
        socket.emit('session_request', { session_id: sessionId });
        expect(await confirmed).toBe(sessionId);
        const call = await open();
        const uttered = new Promise((resolve) => socket.once('bot_uttered', resolve));
        socket.emit('user_uttered', { message: '/bot_challenge', session_id: sessionId });
        const id = call.speech('/bot_challenge');
        expect(await call.next()).toEqual({
          type: 'ack',
          msgid: id,
          data: [say('I am a bot, built with Parley.'), gather],
        });
        expect(await uttered).toMatchObject({ text: 'I am a bot, built with Parley.' });
        call.close();
      } finally {
        socket.close();
      }
    });

    it('refuses an upgrade without the configured basic auth with 401', async () => {
      const wrong = `Basic ${Buffer.from(`${JB_USER}:guess`).toString('base64')}`;
      await expect(open(uniqueId('call'), {})).rejects.toThrow('HTTP 401');
      await expect(open(uniqueId('call'), { Authorization: wrong })).rejects.toThrow('HTTP 401');
      await expect(open(uniqueId('call'), { Authorization: 'Bearer x' })).rejects.toThrow(
        'HTTP 401',
      );
    });

    it('closes cleanly on malformed JSON, a non-object, binary, an oversize message or a flood, and keeps serving', async () => {
      const bad = await open();
      bad.ws.send('{"type": "session:new", ');
      expect(await bad.closed).toEqual({ code: 1007, reason: 'the message is not valid JSON' });
      const list = await open();
      list.ws.send('[1, 2]');
      expect((await list.closed).code).toBe(1007);
      const binary = await open();
      binary.ws.send(Buffer.from([1, 2, 3]));
      expect((await binary.closed).code).toBe(1003);
      const big = await open();
      big.ws.send(JSON.stringify({ type: 'verb:hook', pad: 'x'.repeat(70 * 1024) }));
      expect((await big.closed).code).toBe(1009);
      // A flood of hooks, faster than turns run, is cut off.
      const flood = await open();
      for (let i = 0; i < 200; i++) flood.speech('hi');
      expect((await flood.closed).code).toBe(1008);
      // What was waiting when it was cut off is dropped (else 64 turns would run).
      expect((await userEvents(t.url, flood.callSid)).length).toBeLessThan(10);
      const noSid = await open();
      noSid.ws.send(JSON.stringify({ type: 'session:new', msgid: 'm1', data: {} }));
      expect((await noSid.closed).code).toBe(1007);
      // The server is still there.
      const call = await open();
      const id = call.sessionNew();
      expect(await call.next()).toMatchObject({ type: 'ack', msgid: id });
      call.close();
      await request(t.url).get('/webhooks/jambonz/').expect(200, { status: 'ok' });
      expect((await request(t.url).get('/webhooks/jambonz/websocket')).status).toBe(404);
    });
  });
  describe('audiocodes, WebSocket flavour (use_websocket: true, Rasa’s default)', () => {
    let w: TestApp;

    beforeAll(async () => {
      const credentials = credentialsFile(['audiocodes:', `  token: ${AC_TOKEN}`, ''].join('\n'));
      w = await startTestApp({
        withDomain: false,
        env: { PARLEY_CREDENTIALS: credentials, PARLEY_MODEL: models },
      });
    }, 60_000);

    afterAll(async () => {
      await w?.close();
    });

    const call = (path: string, body: unknown, token: string | null = AC_TOKEN) => {
      const req = request(w.url).post(`/webhooks/audiocodes/${path}`);
      if (token !== null) req.set('Authorization', `Bearer ${token}`);
      return req.set('Content-Type', 'application/json').send(JSON.stringify(body));
    };
    const connect = (path: string, token: string | null = AC_TOKEN) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`${w.url.replace('http', 'ws')}/webhooks/audiocodes/${path}`, {
          headers: token === null ? {} : { Authorization: `Bearer ${token}` },
        });
        ws.once('open', () => resolve(ws));
        ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
        ws.once('error', reject);
      });
    const frames = (ws: WebSocket) => {
      const got: unknown[] = [];
      const waiting: ((m: unknown) => void)[] = [];
      ws.on('message', (data: Buffer) => {
        const m: unknown = JSON.parse(data.toString('utf8'));
        const waiter = waiting.shift();
        if (waiter) waiter(m);
        else got.push(m);
      });
      return () =>
        got.length > 0
          ? Promise.resolve(got.shift())
          : new Promise<unknown>((resolve) => waiting.push(resolve));
    };

    it('answers activities with {} and sends the bot’s activities over the conversation’s WebSocket', async () => {
      const id = uniqueId('acws');
      const created = await call('webhook', { conversation: id }).expect(200);
      expect(created.body).toEqual({
        activitiesURL: `conversation/${id}/activities`,
        disconnectURL: `conversation/${id}/disconnect`,
        refreshURL: `conversation/${id}/keepalive`,
        websocketURL: `conversation/${id}/websocket`,
        expiresSeconds: 120,
      });
      await expect(connect(created.body.websocketURL, null)).rejects.toThrow('HTTP 401');
      await expect(connect(created.body.websocketURL, 'guess')).rejects.toThrow('HTTP 401');
      await expect(connect('conversation/nope/websocket')).rejects.toThrow('HTTP 404');
      const ws = await connect(created.body.websocketURL);
      const next = frames(ws);
      await expect(connect(created.body.websocketURL)).rejects.toThrow('HTTP 409');

      const res = await call(`conversation/${id}/activities`, {
        conversation: id,
        activities: [{ id: 'a1', type: 'message', text: 'hi' }],
      }).expect(200);
      expect(res.body).toEqual({});
      expect(await next()).toEqual({
        conversation: id,
        activities: [
          {
            type: 'message',
            text: 'Hi there! How is your day going? good, not so good',
            timestamp: expect.any(String),
            id: expect.any(String),
          },
        ],
      });
      await call(`conversation/${id}/activities`, {
        activities: [{ id: 'a2', type: 'message', text: '/mood_unhappy' }],
      }).expect(200, {});
      const texts = [];
      for (let i = 0; i < 2; i++) {
        const frame = (await next()) as { activities: { text: string }[] };
        texts.push(frame.activities[0]!.text);
      }
      expect(texts).toEqual([CHEER_UP, DID_THAT_HELP]);

      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      await call(`conversation/${id}/disconnect`, { reason: 'Client Side' }).expect(200, {});
      expect(await closed).toBe(1000);
      const events = await userEvents(w.url, id);
      expect(events.map((e) => e.text)).toEqual(['hi', '/mood_unhappy', '/session_end']);
    });
  });
});
