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
 * A credentials.yml as a Rasa project has it: every messaging connector with the keys and
 * values of Rasa's documentation, nothing of Parley's, beside Rasa's `rest` and `rasa`
 * entries. The one Parley key added is `api_url` where a connector calls its platform at
 * start (Telegram's setWebhook, Rocket.Chat's login), pointed at a closed local port so the
 * test reaches no one.
 */
const RASA_CREDENTIALS = `
rest:
  # you don't need to provide anything here - this channel doesn't
  # require any credentials

facebook:
  verify: "rasa-bot"
  secret: "3e34709d01ea89032asdebfe5a74518"
  page-access-token: "EAAbHPa7H9rEBAAuFk4Q3gPKbDedQnx4djJJ1JmQ7CAqO4iJKrQcNT0wtD"

slack:
  slack_token: "xoxb-286425452756-safjasdf7sl38KLls"
  slack_channel: "C011GR5D33F"
  slack_signing_secret: "YOUR_SIGNING_SECRET"

telegram:
  access_token: "490161424:AAGlRxinBRtKGb21_rlOEMtDFZMXBl6EC0o"
  verify: "your_bot"
  webhook_url: "https://your_url.com/webhooks/telegram/webhook"
  api_url: "http://127.0.0.1:9"

twilio:
  account_sid: "ACbc2dxxxxxxxxxxxx19d54bdcd6e41186"
  auth_token: "e231c197493a7122d475b4xxxxxxxxxx"
  twilio_number: "+440123456789"

twilio_voice:
  initial_prompt: "hello"
  reprompt_fallback_phrase: "I didn't get that could you repeat?"
  assistant_voice: "woman"
  speech_timeout: "5"
  speech_model: "default"
  enhanced: "false"

botframework:
  app_id: "MICROSOFT_APP_ID"
  app_password: "MICROSOFT_APP_PASSWORD"

webexteams:
  access_token: "YOUR-BOT-ACCESS-TOKEN"
  room: "YOUR-CISCOWEBEXTEAMS-ROOM-ID"

hangouts:
  project_id: "12345678901"

mattermost:
  url: "https://chat.example.com/api/v4"
  token: "xxxxx"
  webhook_url: "https://server.example.com/webhooks/mattermost/webhook"

rocketchat:
  user: "yourbotname"
  password: "YOUR_PASSWORD"
  server_url: "https://demo.rocket.chat"
  api_url: "http://127.0.0.1:9"

audiocodes:
  token: "token"

jambonz:

rasa:
  url: "http://localhost:5002/api"
`;

const CONNECTORS = [
  'facebook',
  'slack',
  'telegram',
  'twilio',
  'twilio_voice',
  'botframework',
  'webexteams',
  'hangouts',
  'mattermost',
  'rocketchat',
  'audiocodes',
  'jambonz',
];

describe("a Rasa project's credentials.yml, copied unchanged", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_CREDENTIALS: credentialsFile(RASA_CREDENTIALS),
        PARLEY_MODEL: trainMoodbot(),
      },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close();
  });

  it('starts and serves every connector it lists at its Rasa webhook path', async () => {
    for (const name of ['rest', ...CONNECTORS]) {
      const res = await request(t.url).get(`/webhooks/${name}/`);
      expect([name, res.status, res.body]).toEqual([name, 200, { status: 'ok' }]);
    }
    // Rasa Enterprise's `rasa` channel is skipped with a warning, not served.
    expect((await request(t.url).get('/webhooks/rasa/')).status).toBe(404);
  });

  it('holds a voice call on twilio_voice, which Rasa runs without a signature check', async () => {
    const caller = `+1415${uniqueId('').replace(/\D/g, '').slice(-7).padStart(7, '0')}`;
    const form = { CallSid: uniqueId('CA'), From: caller, To: '+440123456789', SpeechResult: 'hi' };
    const res = await request(t.url)
      .post('/webhooks/twilio_voice/webhook')
      .type('form')
      .send(new URLSearchParams(form).toString())
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.text).toContain(`<Say voice="woman">${GREETING.text}</Say>`);
    const tracker = await request(t.url)
      .get(`/conversations/${encodeURIComponent(caller)}/tracker`)
      .expect(200);
    const users = (tracker.body.events as Array<{ event: string; text?: string }>).filter(
      (e) => e.event === 'user',
    );
    expect(users.map((e) => e.text)).toEqual(['hi']);
  });

  it('still refuses what it can check: a Slack request without its signature', async () => {
    const res = await request(t.url)
      .post('/webhooks/slack/webhook')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ type: 'url_verification', challenge: 'x' }));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 'failure', code: 401 });
  });
});
