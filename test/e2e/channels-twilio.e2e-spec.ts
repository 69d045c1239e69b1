import { createHmac } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { botFiles, MOODBOT, MOODBOT_DIR, trainBot } from 'test/utils/bots';
import { expectUnauthorized, MOODBOT_GREETING as GREETING, userEvents } from 'test/utils/channels';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';
import { type FakeTwilio, startFakeTwilio } from 'test/utils/fake-twilio';
import { parse, stringify } from 'yaml';

const ACCOUNT_SID = 'AC7d0c2b9f1e5a4c3b8a6f0e1d2c3b4a59';
const AUTH_TOKEN = 'twilio-auth-token-for-tests';
const TWILIO_NUMBER = '+15005550006';
const VOICE_URL = 'https://voice.example.org/webhooks/twilio_voice/webhook';
const IMAGE = 'https://images.example.org/parley/sunrise.jpg';
const CHEER_UP = 'Maybe this picture brightens it up:';
const DID_THAT_HELP = 'Did that lift your mood?';
const GOODBYE = 'See you later!';
/** The moodbot's bot-challenge answer, given characters XML must escape. */
const IAMABOT = 'I am a bot & I speak <TwiML>, "quoted".';

/** Twilio's signature: base64 HMAC-SHA1 of the URL and the sorted fields, with the token. */
function sign(url: string, form: Record<string, string>, token = AUTH_TOKEN): string {
  const data = Object.keys(form)
    .sort()
    .reduce((acc, k) => acc + k + form[k], url);
  return createHmac('sha1', token).update(data).digest('base64');
}

const phone = () => `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/**
 * Rasa's `twilio` and `twilio_voice` channels with the mood bot through the real dialogue
 * engine: the form posts Twilio documents for its messaging and voice webhooks go into a real
 * Parley, signed as Twilio signs them, and a fake of Twilio's Messages API (a real HTTP server)
 * records the calls the bot's answers make. The bot's goodbye carries `custom: {hangup: true}`
 * (ends a call) and its bot-challenge answer characters XML must escape.
 */
describe('twilio connectors (moodbot)', () => {
  let dir: string;
  let twilio: FakeTwilio;
  let t: TestApp;
  let smsUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-twilio-'));
    cpSync(join(MOODBOT_DIR, 'data'), join(dir, 'data'), { recursive: true });
    const domain = parse(readFileSync(join(MOODBOT_DIR, 'domain.yml'), 'utf8')) as {
      responses: Record<string, unknown[]>;
    };
    domain.responses.utter_goodbye = [{ text: GOODBYE, custom: { hangup: true } }];
    domain.responses.utter_iamabot = [{ text: IAMABOT }];
    writeFileSync(join(dir, 'domain.yml'), stringify(domain));
    trainBot({ ...botFiles(dir), config: MOODBOT.config }, join(dir, 'models'));
    twilio = await startFakeTwilio(ACCOUNT_SID, AUTH_TOKEN);
    writeFileSync(
      join(dir, 'credentials.yml'),
      stringify({
        twilio: {
          account_sid: ACCOUNT_SID,
          auth_token: AUTH_TOKEN,
          twilio_number: TWILIO_NUMBER,
          api_url: twilio.url,
        },
        twilio_voice: {
          auth_token: AUTH_TOKEN,
          webhook_url: VOICE_URL,
          assistant_voice: 'Polly.Joanna',
          reprompt_fallback_phrase: "Sorry, I didn't catch that.",
        },
      }),
    );
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_CREDENTIALS: join(dir, 'credentials.yml'),
        PARLEY_MODEL: join(dir, 'models'),
      },
    });
    // No webhook_url for `twilio`: the signed URL is the one the request came in on.
    smsUrl = `${t.url}/webhooks/twilio/webhook`;
  }, 240_000);

  afterAll(async () => {
    await t?.close();
    await twilio?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a health route per connector and only POST on the webhooks', async () => {
    for (const name of ['twilio', 'twilio_voice']) {
      expect((await request(t.url).get(`/webhooks/${name}/`).expect(200)).body).toEqual({
        status: 'ok',
      });
      const get = await request(t.url).get(`/webhooks/${name}/webhook`);
      expect(get.status).toBe(404);
      expect(get.body.status).toBe('failure');
    }
  });

  describe('twilio (SMS and WhatsApp)', () => {
    /** An incoming message as Twilio posts it to the messaging webhook. */
    const sms = (from: string, body: string, extra: Record<string, string> = {}) => ({
      ToCountry: 'US',
      SmsMessageSid: `SM${uniqueId('m')}`,
      NumMedia: '0',
      SmsSid: 'SMx',
      SmsStatus: 'received',
      Body: body,
      To: TWILIO_NUMBER,
      NumSegments: '1',
      MessageSid: `SM${uniqueId('m')}`,
      AccountSid: ACCOUNT_SID,
      From: from,
      ApiVersion: '2010-04-01',
      ...extra,
    });
    const post = (form: Record<string, string>, signature: string | null, headers = {}) => {
      const req = request(t.url).post('/webhooks/twilio/webhook').type('form').set(headers);
      if (signature !== null) req.set('X-Twilio-Signature', signature);
      return req.send(new URLSearchParams(form).toString());
    };
    const auth = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`;
    const messagesPath = `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`;
    const text = (to: string, Body: string, From = TWILIO_NUMBER) => ({ To: to, From, Body });

    beforeEach(() => {
      twilio.calls.length = 0;
      twilio.authToken = AUTH_TOKEN;
    });

    it('refuses a missing, wrong or misplaced signature with 401 before any turn', async () => {
      const user = phone();
      const form = sms(user, 'hi');
      expectUnauthorized(await post(form, null));
      expectUnauthorized(await post(form, ''));
      expectUnauthorized(await post(form, sign(smsUrl, form, 'not-the-token')));
      // Signed for another URL (another webhook of the same account).
      expectUnauthorized(await post(form, sign(`${t.url}/webhooks/other`, form)));
      // Signed for a body that was then changed.
      expectUnauthorized(await post({ ...form, Body: 'bye' }, sign(smsUrl, form)));
      // Signed for a public URL a proxy would forward: refused while TRUST_PROXY does not
      // trust the proxy (the X-Forwarded-* headers are not believed).
      const publicUrl = 'https://bot.example.org/webhooks/twilio/webhook';
      expectUnauthorized(
        await post(form, sign(publicUrl, form), {
          'X-Forwarded-Proto': 'https',
          'X-Forwarded-Host': 'bot.example.org',
        }),
      );
      expect(twilio.calls).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('plays an SMS moodbot turn: buttons as text lines, then an image as MediaUrl', async () => {
      const user = phone();
      const form = sms(user, 'hi');
      const res = await post(form, sign(smsUrl, form)).expect(204);
      expect(res.text).toBe('');
      expect(twilio.calls.map((c) => [c.method, c.path, c.headers.authorization])).toEqual(
        Array.from({ length: 3 }, () => ['POST', messagesPath, auth]),
      );
      expect(twilio.forms()).toEqual([
        text(user, GREETING.text),
        ...GREETING.buttons.map((b, i) => text(user, `${i + 1}: ${b.title} (${b.payload})`)),
      ]);

      twilio.calls.length = 0;
      const sad = sms(user, '/mood_unhappy');
      await post(sad, sign(smsUrl, sad)).expect(204);
      expect(twilio.forms()).toEqual([
        text(user, CHEER_UP),
        { To: user, From: TWILIO_NUMBER, MediaUrl: [IMAGE] },
        text(user, DID_THAT_HELP),
      ]);
      const events = await userEvents(t.url, user);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hi', 'twilio'],
        ['/mood_unhappy', 'twilio'],
      ]);
    });

    it('answers a WhatsApp sender from the whatsapp: number, the sender keeping its prefix', async () => {
      const user = `whatsapp:${phone()}`;
      const form = sms(user, 'hi', { To: `whatsapp:${TWILIO_NUMBER}`, ProfileName: 'Ada' });
      await post(form, sign(smsUrl, form)).expect(204);
      expect(twilio.forms()[0]).toEqual(text(user, GREETING.text, `whatsapp:${TWILIO_NUMBER}`));
      expect(twilio.forms()).toHaveLength(3);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('runs one turn for a redelivered MessageSid and replays the first answer', async () => {
      const user = phone();
      const form = sms(user, 'hi');
      await post(form, sign(smsUrl, form)).expect(204);
      const again = await post(form, sign(smsUrl, form)).expect(204);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(twilio.calls).toHaveLength(3);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['hi']);
    });

    it('takes the media URL of a message without a body as its text', async () => {
      const user = phone();
      const media = 'https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1';
      const form = sms(user, '', {
        NumMedia: '1',
        MediaContentType0: 'image/jpeg',
        MediaUrl0: media,
      });
      await post(form, sign(smsUrl, form)).expect(204);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual([media]);
    });

    it('answers 204 without a turn to a form with no body and no media', async () => {
      const user = phone();
      const form = { MessageSid: 'SM1', MessageStatus: 'delivered', From: user, To: TWILIO_NUMBER };
      await post(form, sign(smsUrl, form)).expect(204);
      expect(twilio.calls).toEqual([]);
      expect(await userEvents(t.url, user)).toEqual([]);
    });

    it('retries a 429 after its Retry-After', async () => {
      twilio.rateLimitOnce();
      const user = phone();
      const form = sms(user, '/goodbye');
      await post(form, sign(smsUrl, form)).expect(204);
      // The goodbye's hangup payload sends nothing on a messaging channel.
      expect(twilio.forms()).toEqual([text(user, GOODBYE), text(user, GOODBYE)]);
    });

    it('stores the turn when Twilio refuses the credentials (401)', async () => {
      twilio.authToken = 'rotated-token';
      const user = phone();
      const form = sms(user, '/goodbye');
      await post(form, sign(smsUrl, form)).expect(204);
      expect(twilio.calls).toHaveLength(1);
      expect(twilio.calls[0]!.headers.authorization).toBe(auth);
      expect((await userEvents(t.url, user)).map((e) => e.text)).toEqual(['/goodbye']);
    });

    it('serves output_channel=twilio for the REST API', async () => {
      const user = phone();
      await request(t.url)
        .post(`/conversations/${encodeURIComponent(user)}/trigger_intent`)
        .query({ output_channel: 'twilio' })
        .send({ name: 'greet' })
        .expect(200);
      expect(twilio.forms()[0]).toEqual(text(user, GREETING.text));
    });
  });

  describe('twilio_voice', () => {
    const call = (from: string, extra: Record<string, string>) => ({
      AccountSid: ACCOUNT_SID,
      ApiVersion: '2010-04-01',
      CallSid: `CA${uniqueId('c')}`,
      Called: TWILIO_NUMBER,
      Caller: from,
      Direction: 'inbound',
      From: from,
      To: TWILIO_NUMBER,
      ...extra,
    });
    const post = (form: Record<string, string>, signature: string | null) => {
      const req = request(t.url).post('/webhooks/twilio_voice/webhook').type('form');
      if (signature !== null) req.set('X-Twilio-Signature', signature);
      return req.send(new URLSearchParams(form).toString());
    };
    const say = (s: string) => `<Say voice="Polly.Joanna">${s}</Say>`;
    const gather = (s: string) =>
      `<Gather input="speech" action="${VOICE_URL}" actionOnEmptyResult="true" speechTimeout="5" speechModel="default" enhanced="false">${say(s)}</Gather>`;
    const twiml = (...verbs: string[]) =>
      `<?xml version="1.0" encoding="UTF-8"?><Response>${verbs.join('')}</Response>`;
    const PAUSE = '<Pause length="1"/>';
    /** A signed request to the voice webhook, answered 200 with TwiML. */
    const turn = async (form: Record<string, string>): Promise<string> => {
      const res = await post(form, sign(VOICE_URL, form)).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/xml/);
      return res.text;
    };

    it('answers a call with the initial prompt turn, then a speech turn, in a Gather', async () => {
      twilio.calls.length = 0;
      const caller = phone();
      const ringing = await turn(call(caller, { CallStatus: 'ringing' }));
      expect(ringing).toBe(
        twiml(say(GREETING.text), PAUSE, say('good'), PAUSE, gather('not so good')),
      );
      const sad = await turn(
        call(caller, { CallStatus: 'in-progress', SpeechResult: 'i am sad', Confidence: '0.9' }),
      );
      // The image is left out; its text and the next message are spoken.
      expect(sad).toBe(twiml(say(CHEER_UP), PAUSE, gather(DID_THAT_HELP)));
      const events = await userEvents(t.url, caller);
      expect(events.map((e) => [e.text, e.input_channel])).toEqual([
        ['hello', 'twilio_voice'],
        ['i am sad', 'twilio_voice'],
      ]);
      expect(twilio.calls).toEqual([]);
    });

    it('reprompts with the last bot message when nothing was said, without a turn', async () => {
      const caller = phone();
      await turn(call(caller, { CallStatus: 'ringing' }));
      // The last bot message of the tracker (its buttons were the channel's rendering).
      expect(await turn(call(caller, { CallStatus: 'in-progress' }))).toBe(
        twiml(gather(GREETING.text)),
      );
      expect(await turn(call(caller, { CallStatus: 'in-progress', SpeechResult: '' }))).toBe(
        twiml(gather(GREETING.text)),
      );
      expect((await userEvents(t.url, caller)).map((e) => e.text)).toEqual(['hello']);
      // A caller the bot never spoke to hears the fallback phrase (XML-escaped).
      expect(await turn(call(phone(), { CallStatus: 'in-progress' }))).toBe(
        twiml(gather('Sorry, I didn&apos;t catch that.')),
      );
    });

    it('escapes the bot text in the TwiML', async () => {
      const caller = phone();
      await turn(call(caller, { CallStatus: 'ringing' }));
      expect(
        await turn(call(caller, { CallStatus: 'in-progress', SpeechResult: '/bot_challenge' })),
      ).toBe(twiml(gather('I am a bot &amp; I speak &lt;TwiML&gt;, &quot;quoted&quot;.')));
    });

    it('hangs up after saying goodbye (action_hangup payload)', async () => {
      const caller = phone();
      await turn(call(caller, { CallStatus: 'ringing' }));
      expect(await turn(call(caller, { CallStatus: 'in-progress', SpeechResult: 'bye' }))).toBe(
        twiml(say(GOODBYE), PAUSE, '<Hangup/>'),
      );
    });

    it('refuses a missing or wrong signature with 401 before any turn', async () => {
      const caller = phone();
      const form = call(caller, { CallStatus: 'ringing' });
      expectUnauthorized(await post(form, null));
      expectUnauthorized(await post(form, sign(VOICE_URL, form, 'not-the-token')));
      // Signed for the URL the request came in on, not the configured public webhook_url.
      expectUnauthorized(await post(form, sign(`${t.url}/webhooks/twilio_voice/webhook`, form)));
      expect(await userEvents(t.url, caller)).toEqual([]);
    });

    it('refuses a signed request without the caller (From) with 400', async () => {
      const form = { CallSid: 'CA1', CallStatus: 'ringing', To: TWILIO_NUMBER };
      const res = await post(form, sign(VOICE_URL, form));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 'failure', code: 400 });
    });
  });
});
