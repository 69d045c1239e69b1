import { createHmac } from 'node:crypto';
import request from 'supertest';
import {
  credentialsFile,
  expectUnauthorized,
  MOODBOT_GREETING as GREETING,
  removeTempDirs,
  trainMoodbot,
  userEvents,
} from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';
import { waitUntil } from 'test/utils/echobot';
import { type FakePlatform, type PlatformCall, startFakePlatform } from 'test/utils/fake-platform';
import { startHttpProxy, type TestHttpProxy } from 'test/utils/http-proxy';

afterAll(removeTempDirs);

const SLACK_SECRET = 'slack-signing-secret';
const SLACK_TOKEN = 'xoxb-parley-test';
const TELEGRAM_TOKEN = '123456:parley-test';
const TELEGRAM_SECRET = 'telegram-secret_token';
const FB_SECRET = 'facebook-app-secret';
const FB_TOKEN = 'page-access-token';
const FB_VERIFY = 'fb-verify-token';
const IMAGE = 'https://images.example.org/parley/sunrise.jpg';
const CHEER_UP = 'Maybe this picture brightens it up:';
const DID_THAT_HELP = 'Did that lift your mood?';

/** Slack's request signing: `v0=` HMAC-SHA256 of `v0:<timestamp>:<body>`. */
function slackHeaders(body: string, secret = SLACK_SECRET, at = Date.now()) {
  const ts = String(Math.floor(at / 1000));
  const sig = createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': `v0=${sig}` };
}

/** Meta's signature: `sha256=` HMAC-SHA256 of the body with the app secret. */
function metaSignature(body: string, secret = FB_SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * The messaging connectors (slack, telegram, facebook) with the mood bot through the real
 * dialogue engine: the platforms' documented webhook payloads go into a real Parley, and a fake
 * of each platform's API (a real HTTP server) records the calls the bot's answers make.
 */
describe('messaging connectors (moodbot)', () => {
  let slack: FakePlatform;
  let telegram: FakePlatform;
  let facebook: FakePlatform;
  let proxy: TestHttpProxy;
  let t: TestApp;

  beforeAll(async () => {
    proxy = await startHttpProxy();
    slack = await startFakePlatform(() => ({ body: { ok: true, ts: '1.2' } }));
    telegram = await startFakePlatform((call) =>
      call.path.endsWith('/getMe')
        ? { body: { ok: true, result: { id: 123456, is_bot: true, username: 'parley_bot' } } }
        : { body: { ok: true, result: true } },
    );
    facebook = await startFakePlatform(() => ({
      body: { recipient_id: 'x', message_id: 'm' },
    }));
    const credentials = credentialsFile(
      [
        'slack:',
        `  slack_token: ${SLACK_TOKEN}`,
        `  slack_signing_secret: ${SLACK_SECRET}`,
        '  use_threads: true',
        `  api_url: ${slack.url}/api`,
        `  proxy: ${proxy.url}`,
        'telegram:',
        `  access_token: "${TELEGRAM_TOKEN}"`,
        '  verify: parley_bot',
        '  webhook_url: https://bot.example.org/webhooks/telegram/webhook',
        `  secret_token: ${TELEGRAM_SECRET}`,
        `  api_url: ${telegram.url}`,
        'facebook:',
        `  verify: ${FB_VERIFY}`,
        `  secret: ${FB_SECRET}`,
        `  page-access-token: ${FB_TOKEN}`,
        `  api_url: ${facebook.url}/v21.0`,
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
    await slack?.close();
    await telegram?.close();
    await facebook?.close();
    await proxy?.close();
  });

  it('serves a health route per connector and only the routes each platform uses', async () => {
    for (const name of ['slack', 'telegram', 'facebook']) {
      const res = await request(t.url).get(`/webhooks/${name}/`).expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
    const get = await request(t.url).get('/webhooks/slack/webhook');
    expect(get.status).toBe(404);
    expect(get.body.status).toBe('failure');
    expect((await request(t.url).get('/webhooks/slack/set_webhook')).status).toBe(404);
    expect((await request(t.url).put('/webhooks/facebook/webhook')).status).toBe(404);
  });

  describe('slack', () => {
    const event = (user: string, text: string, ts = '1355517523.000005') =>
      JSON.stringify({
        token: 'legacy-verification-token',
        team_id: 'T061EG9R6',
        api_app_id: 'A0PNCHHK2',
        event: {
          type: 'message',
          channel: 'D024BE91L',
          user,
          text,
          ts,
          event_ts: ts,
          channel_type: 'im',
        },
        type: 'event_callback',
        event_id: `Ev${Math.random().toString(36).slice(2, 10)}`,
        event_time: 1355517523,
        authorizations: [{ team_id: 'T061EG9R6', user_id: 'U0BOT', is_bot: true }],
      });

    const post = (body: string, headers: Record<string, string>, type = 'application/json') =>
      request(t.url)
        .post('/webhooks/slack/webhook')
        .set('Content-Type', type)
        .set(headers)
        .send(body);

    beforeEach(() => (slack.calls.length = 0));

    it('answers the URL verification challenge of a signed request', async () => {
      const body = JSON.stringify({
        token: 'legacy',
        challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
        type: 'url_verification',
      });
      const res = await post(body, slackHeaders(body)).expect(200);
      expect(res.body).toBe('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P');
    });

    it('refuses a missing, wrong or stale signature with 401 and runs no turn', async () => {
      const user = uniqueId('U');
      const body = event(user, 'hi');
      expectUnauthorized(await post(body, {}));
      expectUnauthorized(await post(body, slackHeaders(body, 'not-the-secret')));
      expectUnauthorized(
        await post(body, slackHeaders(body, SLACK_SECRET, Date.now() - 6 * 60_000)),
      );
      // Signed for another body.
      expectUnauthorized(await post(body, slackHeaders(event(user, 'hello'))));
      // Not JSON at all, unsigned: refused before it is parsed.
      expectUnauthorized(await post('{"event": ', {}));
      expect(slack.calls).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('plays a moodbot turn: buttons as blocks in the thread, then a button click with an image', async () => {
      const user = uniqueId('U');
      const body = event(user, 'hi');
      const res = await post(body, slackHeaders(body)).expect(200);
      expect(res.text).toBe('');
      const greet = {
        channel: 'D024BE91L',
        as_user: true,
        text: GREETING.text,
        blocks: [
          { type: 'section', text: { type: 'plain_text', text: GREETING.text } },
          {
            type: 'actions',
            elements: GREETING.buttons.map((b) => ({
              type: 'button',
              text: { type: 'plain_text', text: b.title },
              value: b.payload,
            })),
          },
        ],
        thread_ts: '1355517523.000005',
      };
      expect(slack.calls.map((c) => [c.method, c.path, c.body])).toEqual([
        ['POST', '/api/chat.postMessage', greet],
      ]);
      expect(slack.calls[0]!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
      expect(slack.calls[0]!.headers['content-type']).toMatch(/^application\/json/);
      // Rasa's `proxy` setting: Slack's API is reached through that proxy.
      expect(proxy.requests.map((r) => r.target)).toContainEqual(
        expect.stringContaining(new URL(slack.url).host),
      );

      const [user1] = await userEvents(t.url, user);
      expect(user1).toMatchObject({
        text: 'hi',
        input_channel: 'slack',
        metadata: { out_channel: 'D024BE91L', thread_id: '1355517523.000005', users: ['U0BOT'] },
      });

      // The user clicks "not so good": Slack posts the interaction form-encoded.
      slack.calls.length = 0;
      const payload = JSON.stringify({
        type: 'block_actions',
        user: { id: user, username: 'ann', team_id: 'T061EG9R6' },
        channel: { id: 'D024BE91L', name: 'directmessage' },
        message: { type: 'message', ts: '1355517524.000007', thread_ts: '1355517523.000005' },
        actions: [
          {
            type: 'button',
            action_id: 'a1',
            block_id: 'b1',
            text: { type: 'plain_text', text: 'not so good' },
            value: '/mood_unhappy',
            action_ts: '1355517525.1',
          },
        ],
      });
      const form = `payload=${encodeURIComponent(payload)}`;
      await post(form, slackHeaders(form), 'application/x-www-form-urlencoded').expect(200);
      const thread = { channel: 'D024BE91L', thread_ts: '1355517523.000005' };
      expect(slack.calls.map((c) => c.body)).toEqual([
        { ...thread, as_user: true, text: CHEER_UP, type: 'mrkdwn' },
        {
          ...thread,
          as_user: true,
          text: IMAGE,
          blocks: [{ type: 'image', image_url: IMAGE, alt_text: IMAGE }],
        },
        { ...thread, as_user: true, text: DID_THAT_HELP, type: 'mrkdwn' },
      ]);
      const events = await userEvents(t.url, user);
      expect(events.map((e) => e.text)).toEqual(['hi', '/mood_unhappy']);
      expect(events[1]!.metadata).toMatchObject({
        out_channel: 'D024BE91L',
        thread_id: '1355517523.000005',
        users: [user],
      });
    });

    it('answers a retry for http_timeout with 201 and X-Slack-No-Retry, without a second turn', async () => {
      const user = uniqueId('U');
      const body = event(user, 'hi');
      await post(body, slackHeaders(body)).expect(200);
      expect(slack.calls).toHaveLength(1);
      const retry = await post(body, {
        ...slackHeaders(body),
        'X-Slack-Retry-Num': '1',
        'X-Slack-Retry-Reason': 'http_timeout',
      });
      expect(retry.status).toBe(201);
      expect(retry.headers['x-slack-no-retry']).toBe('1');
      expect(slack.calls).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
      // A retry for another reason of an event already answered replays that answer (Rasa would
      // run the turn again).
      const other = await post(body, {
        ...slackHeaders(body),
        'X-Slack-Retry-Num': '2',
        'X-Slack-Retry-Reason': 'http_error',
      }).expect(200);
      expect(other.headers['idempotent-replayed']).toBe('true');
      expect(slack.calls).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('replays the first answer to a redelivered event (same event_id) without a second turn', async () => {
      const user = uniqueId('U');
      const body = event(user, 'hi');
      await post(body, slackHeaders(body)).expect(200);
      const again = await post(body, slackHeaders(body)).expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(slack.calls).toHaveLength(1);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('skips bot messages and messages in other channels', async () => {
      const user = uniqueId('U');
      const fromBot = JSON.parse(event(user, 'hi')) as { event: Record<string, unknown> };
      fromBot.event.bot_id = 'B1';
      const botBody = JSON.stringify(fromBot);
      const res = await post(botBody, slackHeaders(botBody)).expect(200);
      expect(res.text).toBe('Bot message delivered.');
      const inChannel = JSON.parse(event(user, 'hi')) as { event: Record<string, unknown> };
      inChannel.event.channel = 'C0OTHER';
      inChannel.event.channel_type = 'channel';
      const channelBody = JSON.stringify(inChannel);
      const other = await post(channelBody, slackHeaders(channelBody)).expect(200);
      expect(other.text).toBe('channel not supported.');
      expect(slack.calls).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('waits out Retry-After when Slack answers 429, then delivers', async () => {
      slack.once('/api/chat.postMessage', {
        status: 429,
        headers: { 'Retry-After': '1' },
        body: { ok: false, error: 'ratelimited' },
      });
      const user = uniqueId('U');
      const body = event(user, 'hi');
      await post(body, slackHeaders(body)).expect(200);
      const sent = slack.callsTo('/chat.postMessage').map((c) => (c.body as { text: string }).text);
      // The refused call, then the same call once Retry-After has passed.
      expect(sent).toEqual([GREETING.text, GREETING.text]);
    });

    it('sends trigger_intent answers through Slack with output_channel=slack', async () => {
      const id = uniqueId('D');
      await request(t.url)
        .post(`/conversations/${id}/trigger_intent?output_channel=slack`)
        .send({ name: 'greet' })
        .expect(200);
      expect(slack.calls.map((c) => [c.path, (c.body as Record<string, unknown>).channel])).toEqual(
        [['/api/chat.postMessage', id]],
      );
      expect(slack.calls[0]!.body).not.toHaveProperty('thread_ts');
    });

    it('bounds the body: a body over the message limit is a 413', async () => {
      const body = JSON.stringify({ type: 'event_callback', pad: 'x'.repeat(70 * 1024) });
      const res = await post(body, slackHeaders(body));
      expect(res.status).toBe(413);
      expect(slack.calls).toEqual([]);
    });
  });

  describe('telegram', () => {
    const chat = () => Math.floor(Math.random() * 1e9);
    const post = (update: unknown, secret: string | null = TELEGRAM_SECRET) => {
      const req = request(t.url)
        .post('/webhooks/telegram/webhook')
        .set('Content-Type', 'application/json');
      if (secret !== null) req.set('X-Telegram-Bot-Api-Secret-Token', secret);
      return req.send(JSON.stringify(update));
    };
    const message = (chatId: number, text: string) => ({
      update_id: 10000 + chatId,
      message: {
        message_id: 1365,
        from: { id: chatId, is_bot: false, first_name: 'Ann', language_code: 'en' },
        chat: { id: chatId, first_name: 'Ann', type: 'private' },
        date: 1441645532,
        text,
      },
    });
    const sent = (calls: PlatformCall[]) =>
      calls
        .filter((c) => !c.path.endsWith('/getMe') && !c.path.endsWith('/setWebhook'))
        .map((c) => [c.path.replace(`/bot${TELEGRAM_TOKEN}`, ''), c.body]);

    it('calls setWebhook with the URL and secret token at start', async () => {
      await waitUntil(() => telegram.callsTo('/setWebhook').length > 0, 'setWebhook', 10_000);
      const [call] = telegram.callsTo('/setWebhook');
      expect(call!.path).toBe(`/bot${TELEGRAM_TOKEN}/setWebhook`);
      expect(call!.body).toEqual({
        url: 'https://bot.example.org/webhooks/telegram/webhook',
        secret_token: TELEGRAM_SECRET,
      });
      const res = await request(t.url).get('/webhooks/telegram/set_webhook').expect(200);
      expect(res.text).toBe('Webhook setup successful');
    });

    it('refuses an update without the secret token, or with another, with 401', async () => {
      const id = chat();
      telegram.calls.length = 0;
      expectUnauthorized(await post(message(id, 'hi'), null));
      expectUnauthorized(await post(message(id, 'hi'), 'another-token'));
      expect(telegram.calls).toEqual([]);
      expect(await userEvents(t.url, String(id))).toEqual([]);
    });

    it('plays a moodbot turn: an inline keyboard, then a callback query with a photo', async () => {
      const id = chat();
      telegram.calls.length = 0;
      const res = await post(message(id, 'hi')).expect(200);
      expect(res.text).toBe('success');
      expect(sent(telegram.calls)).toEqual([
        [
          '/sendMessage',
          {
            chat_id: String(id),
            text: GREETING.text,
            reply_markup: {
              inline_keyboard: [
                GREETING.buttons.map((b) => ({ text: b.title, callback_data: b.payload })),
              ],
            },
          },
        ],
      ]);
      telegram.calls.length = 0;
      await post({
        update_id: 20000 + id,
        callback_query: {
          id: '4382bfdwdsb323b2d9',
          from: { id, is_bot: false, first_name: 'Ann' },
          message: {
            message_id: 1366,
            from: { id: 123456, is_bot: true, first_name: 'Parley', username: 'parley_bot' },
            chat: { id, first_name: 'Ann', type: 'private' },
            date: 1441645533,
            text: GREETING.text,
          },
          chat_instance: '-1234',
          data: '/mood_unhappy',
        },
      }).expect(200, 'success');
      expect(sent(telegram.calls)).toEqual([
        ['/sendMessage', { chat_id: String(id), text: CHEER_UP }],
        ['/sendPhoto', { chat_id: String(id), photo: IMAGE }],
        ['/sendMessage', { chat_id: String(id), text: DID_THAT_HELP }],
      ]);
      const events = await userEvents(t.url, String(id));
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'telegram'],
        ['/mood_unhappy', 'telegram'],
      ]);
    });

    it('sends trigger_intent answers to the chat with output_channel=telegram', async () => {
      const id = chat();
      telegram.calls.length = 0;
      await request(t.url)
        .post(`/conversations/${id}/trigger_intent?output_channel=telegram`)
        .send({ name: 'greet' })
        .expect(200);
      expect(sent(telegram.calls)).toEqual([
        [
          '/sendMessage',
          {
            chat_id: String(id),
            text: GREETING.text,
            reply_markup: {
              inline_keyboard: [
                GREETING.buttons.map((b) => ({ text: b.title, callback_data: b.payload })),
              ],
            },
          },
        ],
      ]);
    });

    it('replays the first answer to a redelivered update (same update_id)', async () => {
      const id = chat();
      telegram.calls.length = 0;
      await post(message(id, 'hi')).expect(200, 'success');
      const again = await post(message(id, 'hi')).expect(200, 'success');
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(sent(telegram.calls)).toHaveLength(1);
      expect((await userEvents(t.url, String(id))).map((e) => e.text)).toEqual(['hi']);
    });

    it('answers other updates success without a turn', async () => {
      const id = chat();
      telegram.calls.length = 0;
      const sticker = message(id, '') as { message: Record<string, unknown> };
      delete sticker.message.text;
      sticker.message.sticker = { file_id: 'x', width: 512, height: 512 };
      await post(sticker).expect(200, 'success');
      expect(sent(telegram.calls)).toEqual([]);
      expect(await userEvents(t.url, String(id))).toEqual([]);
    });
  });

  describe('facebook', () => {
    const post = (body: string, signature: string | null) => {
      const req = request(t.url)
        .post('/webhooks/facebook/webhook')
        .set('Content-Type', 'application/json');
      if (signature !== null) req.set('X-Hub-Signature-256', signature);
      return req.send(body);
    };
    const page = (psid: string, event: Record<string, unknown>) =>
      JSON.stringify({
        object: 'page',
        entry: [
          {
            id: 'PAGE_ID',
            time: 1458692752478,
            messaging: [
              {
                sender: { id: psid },
                recipient: { id: 'PAGE_ID' },
                timestamp: 1458692752478,
                ...event,
              },
            ],
          },
        ],
      });
    const sendApi = (psid: string, message: unknown) => ({
      messaging_type: 'RESPONSE',
      recipient: { id: psid },
      message,
      notification_type: 'REGULAR',
    });
    const action = (psid: string, a: string) => ({ recipient: { id: psid }, sender_action: a });

    beforeEach(() => (facebook.calls.length = 0));

    it('answers the subscription check with hub.challenge, and refuses another verify token', async () => {
      const ok = await request(t.url)
        .get('/webhooks/facebook/webhook')
        .query({
          'hub.mode': 'subscribe',
          'hub.verify_token': FB_VERIFY,
          'hub.challenge': '1158201444',
        })
        .expect(200);
      expect(ok.text).toBe('1158201444');
      const bad = await request(t.url)
        .get('/webhooks/facebook/webhook')
        .query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'guess', 'hub.challenge': '1' });
      expect(bad.status).toBe(403);
      expect(bad.body).toMatchObject({ status: 'failure', code: 403 });
    });

    it('refuses a missing or wrong X-Hub-Signature-256 with 401 and runs no turn', async () => {
      const psid = uniqueId('psid');
      const body = page(psid, { message: { mid: 'm_1', text: 'hi' } });
      expectUnauthorized(await post(body, null));
      expectUnauthorized(await post(body, metaSignature(body, 'not-the-secret')));
      expectUnauthorized(await post(body, metaSignature(`${body} `)));
      // Only the SHA-1 header Rasa reads: not enough.
      const sha1 = createHmac('sha1', FB_SECRET).update(body).digest('hex');
      const onlySha1 = await request(t.url)
        .post('/webhooks/facebook/webhook')
        .set('Content-Type', 'application/json')
        .set('X-Hub-Signature', `sha1=${sha1}`)
        .send(body);
      expectUnauthorized(onlySha1);
      expect(facebook.calls).toEqual([]);
      expect(await userEvents(t.url, psid)).toEqual([]);
    });

    it('plays a moodbot turn: a button template, then a postback with an image', async () => {
      const psid = uniqueId('psid');
      const body = page(psid, { message: { mid: 'm_1', text: 'hi' } });
      const res = await post(body, metaSignature(body)).expect(200);
      expect(res.text).toBe('success');
      expect(
        facebook.calls.every((c) => c.method === 'POST' && c.path === '/v21.0/me/messages'),
      ).toBe(true);
      expect(facebook.calls.every((c) => c.query.access_token === FB_TOKEN)).toBe(true);
      expect(facebook.calls.map((c) => c.body)).toEqual([
        action(psid, 'mark_seen'),
        action(psid, 'typing_on'),
        sendApi(psid, {
          attachment: {
            type: 'template',
            payload: {
              template_type: 'button',
              text: GREETING.text,
              buttons: GREETING.buttons.map((b) => ({ ...b, type: 'postback' })),
            },
          },
        }),
        action(psid, 'typing_off'),
      ]);

      facebook.calls.length = 0;
      const postback = page(psid, {
        postback: { title: 'not so good', payload: '/mood_unhappy', mid: 'm_2' },
      });
      await post(postback, metaSignature(postback)).expect(200, 'success');
      expect(facebook.calls.map((c) => c.body)).toEqual([
        action(psid, 'mark_seen'),
        action(psid, 'typing_on'),
        sendApi(psid, { text: CHEER_UP }),
        sendApi(psid, { attachment: { type: 'image', payload: { url: IMAGE } } }),
        sendApi(psid, { text: DID_THAT_HELP }),
        action(psid, 'typing_off'),
      ]);

      facebook.calls.length = 0;
      const quick = page(psid, {
        message: { mid: 'm_3', text: 'good', quick_reply: { payload: '/mood_great' } },
      });
      await post(quick, metaSignature(quick)).expect(200, 'success');
      expect(facebook.calls.map((c) => c.body)).toContainEqual(
        sendApi(psid, { text: 'Glad to hear it. Keep it up!' }),
      );
      const events = await userEvents(t.url, psid);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'facebook'],
        ['/mood_unhappy', 'facebook'],
        ['/mood_great', 'facebook'],
      ]);
    });

    it('replays the first answer to a redelivered batch (same mid)', async () => {
      const psid = uniqueId('psid');
      const body = page(psid, { message: { mid: `m_${psid}`, text: 'hi' } });
      await post(body, metaSignature(body)).expect(200, 'success');
      const again = await post(body, metaSignature(body)).expect(200, 'success');
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(facebook.calls).toHaveLength(4);
      expect((await userEvents(t.url, psid)).map((e) => e.text)).toEqual(['hi']);
    });

    it('stores the turn when the Send API refuses a call, and sends the rest', async () => {
      facebook.once('/v21.0/me/messages', { status: 500, body: { error: { code: 2 } } });
      const psid = uniqueId('psid');
      const body = page(psid, { message: { mid: `m_${psid}`, text: 'hi' } });
      await post(body, metaSignature(body)).expect(200, 'success');
      expect(
        facebook.calls.map((c) => (c.body as { sender_action?: string }).sender_action),
      ).toEqual(['mark_seen', 'typing_on', undefined, 'typing_off']);
      expect((await userEvents(t.url, psid)).map((e) => e.text)).toEqual(['hi']);
    });

    it('ignores echoes of the page’s own messages', async () => {
      const psid = uniqueId('psid');
      const body = page(psid, { message: { mid: 'm_e', text: 'hi', is_echo: true, app_id: 1 } });
      await post(body, metaSignature(body)).expect(200, 'success');
      expect(facebook.calls).toEqual([]);
      expect(await userEvents(t.url, psid)).toEqual([]);
    });
  });
});
