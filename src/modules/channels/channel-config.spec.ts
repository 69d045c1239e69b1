import { join } from 'node:path';
import { DialogueError } from 'src/core';
import { configureChannels, VOICE_CONNECTOR_KEY } from './channel-config';
import { parseCredentials } from './credentials';

const ROOT = join(__dirname, '..', '..', '..');
const FILE = 'credentials.yml';

function setup(doc: unknown) {
  return configureChannels(parseCredentials(doc, FILE), FILE, ROOT);
}

function failure(doc: unknown): DialogueError {
  try {
    setup(doc);
  } catch (e) {
    expect(e).toBeInstanceOf(DialogueError);
    expect((e as DialogueError).code).toBe('CONFIG.INVALID');
    return e as DialogueError;
  }
  throw new Error('expected CONFIG.INVALID');
}

describe('configureChannels', () => {
  it('reads rest, callback and socketio with Rasa defaults', () => {
    const { channels, warnings } = setup({
      rest: null,
      callback: { url: 'http://127.0.0.1:5034/bot', token: 's3cret', headers: { 'x-k': 'v' } },
      socketio: { session_persistence: true },
    });
    expect(warnings).toEqual([]);
    expect(channels.map((c) => c.name)).toEqual(['rest', 'callback', 'socketio']);
    expect(channels[1]).toMatchObject({
      endpoint: {
        url: 'http://127.0.0.1:5034/bot',
        params: { token: 's3cret' },
        headers: { 'x-k': 'v' },
      },
    });
    expect(channels[2]).toMatchObject({
      settings: {
        userMessageEvt: 'user_uttered',
        botMessageEvt: 'bot_uttered',
        sessionPersistence: true,
        socketioPath: '/socket.io',
        metadataKey: 'metadata',
        namespace: null,
        jwtKey: null,
      },
    });
  });

  it('warns about settings a built-in channel does not know', () => {
    const { warnings } = setup({ socketio: { user_message_evt: 'u', colour: 'red' } });
    expect(warnings).toEqual([
      'credentials credentials.yml: "socketio.colour" is not a setting of socketio; ignored',
    ]);
  });

  it('skips Rasa channels Parley does not provide with one warning each (Rasa `BUILTIN_CHANNELS`)', () => {
    const { channels, warnings } = setup({
      rest: null,
      rasa: { url: 'http://localhost:5002/api' },
      cmdline: null,
    });
    expect(channels.map((c) => c.name)).toEqual(['rest']);
    expect(warnings).toHaveLength(2);
    for (const [i, name] of ['rasa', 'cmdline'].entries()) {
      expect(warnings[i]).toContain(`"${name}" is a Rasa channel that Parley does not provide`);
    }
  });

  it('starts entries copied from Rasa without the secrets Parley checks requests with, warning for each', () => {
    const { channels, warnings } = setup({
      twilio_voice: null,
      telegram: { access_token: 't', verify: 'bot' },
      webexteams: { access_token: 't', room: 'r' },
      hangouts: null,
      mattermost: { url: 'https://chat.example.com/api/v4', token: 't' },
      rocketchat: { user: 'u', password: 'p', server_url: 'https://chat.example.com' },
    });
    expect(channels.map((c) => c.name)).toEqual([
      'twilio_voice',
      'telegram',
      'webexteams',
      'hangouts',
      'mattermost',
      'rocketchat',
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /"twilio_voice": no auth_token: calls are accepted without checking X-Twilio-Signature/,
      ),
      expect.stringMatching(/"telegram": no secret_token: updates are accepted without/),
      expect.stringMatching(
        /"webexteams": no webhook_secret: deliveries are accepted without X-Spark/,
      ),
      expect.stringMatching(/"hangouts": no project_id: Google Chat events are accepted without/),
      expect.stringMatching(
        /"mattermost": no webhook_token: outgoing webhook requests are accepted/,
      ),
      expect.stringMatching(/"rocketchat": no webhook_token: integration requests are accepted/),
    ]);
  });

  it('reads twilio and twilio_voice with Rasa defaults', () => {
    const { channels, warnings } = setup({
      twilio: { account_sid: 'AC1', auth_token: 't', twilio_number: '+15005550006' },
      twilio_voice: { auth_token: 't', speech_timeout: 3, enhanced: false },
    });
    expect(warnings).toEqual([]);
    expect(channels.map((c) => [c.kind, c.name])).toEqual([
      ['connector', 'twilio'],
      ['connector', 'twilio_voice'],
    ]);
    expect(channels[0]).toMatchObject({
      settings: {
        accountSid: 'AC1',
        authToken: 't',
        twilioNumber: '+15005550006',
        webhookUrl: null,
        http: { baseUrl: 'https://api.twilio.com', timeoutMs: 10_000, proxy: null },
      },
    });
    expect(channels[1]).toMatchObject({
      settings: {
        initialPrompt: 'hello',
        repromptFallbackPhrase: "I'm sorry I didn't get that could you rephrase.",
        assistantVoice: 'woman',
        speechTimeout: '3',
        speechModel: 'default',
        enhanced: 'false',
        authToken: 't',
        webhookUrl: null,
      },
    });
  });

  it.each([
    [{ slak: null }, '"slak" is not a known channel'],
    [{ slack: { slack_token: 'x' } }, '"slack.slack_signing_secret" is missing'],
    [
      { slack: { slack_token: 'x', slack_signing_secret: 'y', proxy: 'socks5://u:secret@h:1080' } },
      '"slack.proxy" must be an http(s) URL of a proxy',
    ],
    [{ slack: { slack_signing_secret: 'x' } }, '"slack.slack_token" is missing'],
    [
      { slack: { slack_token: 'x', slack_signing_secret: 'y', conversation_granularity: 'team' } },
      '"slack.conversation_granularity" must be sender, channel or thread',
    ],
    [{ telegram: { verify: 'bot' } }, '"telegram.access_token" is missing'],
    [{ telegram: { access_token: 't' } }, '"telegram.verify" is missing'],
    [
      { telegram: { access_token: 't', verify: 'b', webhook_url: 'ftp://x' } },
      '"telegram.webhook_url" must be an http(s) URL',
    ],
    [{ facebook: { verify: 'v', secret: 's' } }, '"facebook.page-access-token" is missing'],
    [{ facebook: { verify: 'v', 'page-access-token': 'p' } }, '"facebook.secret" is missing'],
    [
      { facebook: { verify: 'v', secret: 's', 'page-access-token': 'p', api_url: 'x' } },
      '"facebook.api_url" must be an http(s) URL',
    ],
    [{ twilio: { auth_token: 't', twilio_number: '+1' } }, '"twilio.account_sid" is missing'],
    [{ twilio: { account_sid: 'AC1', twilio_number: '+1' } }, '"twilio.auth_token" is missing'],
    [{ twilio: { account_sid: 'AC1', auth_token: 't' } }, '"twilio.twilio_number" is missing'],
    [
      { twilio: { account_sid: 'AC1', auth_token: 't', twilio_number: '+1', webhook_url: '/x' } },
      '"twilio.webhook_url" must be an http(s) URL',
    ],
    [
      { twilio_voice: { auth_token: 't', assistant_voice: 'Polly.Nobody' } },
      '"twilio_voice.assistant_voice" must be one of the voices Rasa supports',
    ],
    [
      { twilio_voice: { auth_token: 't', speech_timeout: 'soon' } },
      '"twilio_voice.speech_timeout" must be a whole number of seconds or auto',
    ],
    [
      { twilio_voice: { auth_token: 't', speech_model: 'experimental' } },
      '"twilio_voice.speech_model" must be default, numbers_and_commands or phone_call',
    ],
    [
      { twilio_voice: { auth_token: 't', enhanced: 'yes' } },
      '"twilio_voice.enhanced" must be true or false',
    ],
    [
      { twilio_voice: { auth_token: 't', enhanced: true } },
      '"twilio_voice.enhanced" can be true only with speech_model phone_call',
    ],
    [
      { twilio_voice: { auth_token: 't', speech_timeout: 'auto', speech_model: 'phone_call' } },
      '"twilio_voice.speech_timeout" can be auto only with speech_model numbers_and_commands',
    ],
    [{ botframework: { app_password: 'p' } }, '"botframework.app_id" is missing'],
    [{ botframework: { app_id: 'a' } }, '"botframework.app_password" is missing'],
    [
      { botframework: { app_id: 'a', app_password: 'p', login_url: 'not a url' } },
      '"botframework.login_url" must be an http(s) URL',
    ],
    [
      { botframework: { app_id: 'a', app_password: 'p', openid_metadata_url: 'ftp://x' } },
      '"botframework.openid_metadata_url" must be an http(s) URL',
    ],
    [
      { botframework: { app_id: 'a', app_password: 'p', timeout: 0 } },
      '"botframework.timeout" must be a positive number of seconds',
    ],
    [{ webexteams: { room: 'r' } }, '"webexteams.access_token" is missing'],
    [
      { webexteams: { access_token: 't', api_url: 'webexapis.com' } },
      '"webexteams.api_url" must be an http(s) URL',
    ],
    [{ hangouts: { certs_url: 'x' } }, '"hangouts.certs_url" must be an http(s) URL'],
    [{ hangouts: { project_id: [1] } }, '"hangouts.project_id" must be a string'],
    [
      { hangouts: { hangouts_removed_intent_name: 3 } },
      '"hangouts.hangouts_removed_intent_name" must be a string',
    ],
    [{ mattermost: { token: 't', webhook_token: 'w' } }, '"mattermost.url" is missing'],
    [
      { mattermost: { url: 'ftp://x', token: 't', webhook_token: 'w' } },
      '"mattermost.url" must be an http(s) URL',
    ],
    [
      { mattermost: { url: 'http://x/api/v4', webhook_token: 'w' } },
      '"mattermost.token" is missing',
    ],
    [
      { mattermost: { url: 'http://x', token: 't', webhook_token: 'w', webhook_url: 'x' } },
      '"mattermost.webhook_url" must be an http(s) URL',
    ],
    [
      { rocketchat: { user: 'u', password: 'p', webhook_token: 'w' } },
      '"rocketchat.server_url" is missing',
    ],
    [
      { rocketchat: { user: 'u', password: 'p', server_url: 'chat', webhook_token: 'w' } },
      '"rocketchat.server_url" must be an http(s) URL',
    ],
    [
      { rocketchat: { password: 'p', server_url: 'http://x', webhook_token: 'w' } },
      '"rocketchat.user" is missing',
    ],
    [
      { rocketchat: { user: 'u', server_url: 'http://x', webhook_token: 'w' } },
      '"rocketchat.password" is missing',
    ],
    [{ audiocodes: { keep_alive: 60 } }, '"audiocodes.token" is missing'],
    [
      { audiocodes: { token: 't', use_websocket: 'no' } },
      '"audiocodes.use_websocket" must be true or false',
    ],
    [
      { audiocodes: { token: 't', keep_alive: 0 } },
      '"audiocodes.keep_alive" must be a positive number',
    ],
    [
      { audiocodes: { token: 't', keep_alive_expiration_factor: 0.5 } },
      '"audiocodes.keep_alive_expiration_factor" must be a number of at least 1',
    ],
    [{ jambonz: { username: 'u' } }, '"jambonz.password" is missing'],
    [{ jambonz: { password: 'p' } }, '"jambonz.username" is missing'],
    [{ jambonz: { username: 'u', password: 3 } }, '"jambonz.password" must be a string'],
    [{ callback: null }, '"callback.url" is missing'],
    [{ callback: { url: 'ftp://x' } }, '"callback.url" must be an http(s) URL'],
    [{ callback: { url: 'http://x', headers: [1] } }, '"callback.headers" must be a mapping'],
    [
      { callback: { url: 'http://x', basic_auth: 'u:p' } },
      '"callback.basic_auth" must be a mapping',
    ],
    [
      { socketio: { session_persistence: 'yes' } },
      '"socketio.session_persistence" must be true or false',
    ],
    [{ socketio: { user_message_evt: 3 } }, '"socketio.user_message_evt" must be a string'],
    [{ socketio: { socketio_path: 'socket' } }, '"socketio.socketio_path" must start with "/"'],
    [{ rest: 'yes' }, '"rest" must be a mapping of settings'],
    [['rest'], 'must be a mapping from channel name'],
    [{ 'addons.missing.Channel': null }, 'names a custom channel module that was not found'],
    [{ 'test.fixtures.channels.my_channels.Nope': null }, 'exports no class "Nope"'],
    [
      { 'test.fixtures.channels.my_channels.PickyChannel': {} },
      'could not be built from its settings: api_key is required',
    ],
  ])('rejects %j naming the key', (doc, message) => {
    expect(failure(doc).message).toContain(message);
  });

  it('loads custom channels by Rasa-style module path or by file path', () => {
    const { channels } = setup({
      'test.fixtures.channels.my_channels.MyChannel': null,
      './test/fixtures/channels/my_channels.ShoutChannel': { greeting: 'hello' },
    });
    expect(channels.map((c) => [c.kind, c.name])).toEqual([
      ['custom', 'myio'],
      ['custom', 'shout'],
    ]);
  });

  it('rejects two entries serving the same webhook', () => {
    expect(
      failure({
        'test.fixtures.channels.my_channels.MyChannel': null,
        './test/fixtures/channels/my_channels.MyChannel': null,
      }).message,
    ).toContain('"myio" is configured twice');
  });

  it('accepts the voice connector key and checks it with the voice validation', () => {
    const genesys = {
      api_key: 'k',
      server_url: 'x.example.com',
      asr: { name: 'pocketsphinx' },
      tts: { name: 'flite' },
    };
    expect(VOICE_CONNECTOR_KEY).toBe('genesys');
    expect(setup({ rest: null, genesys }).channels).toEqual([
      { kind: 'rest', name: 'rest' },
      { kind: 'voice', name: 'genesys', settings: genesys },
    ]);
    expect(() => setup({ genesys: { ...genesys, api_key: undefined } })).toThrow(
      /genesys\.api_key/,
    );
  });

  it('reads the chat and voice connectors, jambonz with or without basic auth', () => {
    const { channels, warnings } = setup({
      jambonz: null,
      audiocodes: { token: 't' },
      rocketchat: { user: 'u', password: 'p', server_url: 'http://rc', webhook_token: 'w' },
      mattermost: { url: 'http://mm/api/v4', token: 't', webhook_token: 'w', team: 'x' },
    });
    expect(channels.map((c) => [c.kind, c.name])).toEqual([
      ['connector', 'jambonz'],
      ['connector', 'audiocodes'],
      ['connector', 'rocketchat'],
      ['connector', 'mattermost'],
    ]);
    expect(channels[0]).toMatchObject({ settings: { basicAuth: null } });
    expect(channels[1]).toMatchObject({
      settings: {
        token: 't',
        useWebsocket: true,
        keepAliveSeconds: 120,
        keepAliveExpirationFactor: 1.5,
      },
    });
    expect(warnings).toEqual([
      'credentials credentials.yml: "mattermost.team" is not a setting of mattermost; ignored',
    ]);
    expect(setup({ jambonz: { username: 'u', password: 'p' } }).channels[0]).toMatchObject({
      settings: { basicAuth: { username: 'u', password: 'p' } },
    });
  });

  it('names every built-in channel when a key is unknown', () => {
    expect(failure({ slak: null }).message).toContain(
      'use rest, callback, socketio, slack, telegram, facebook, twilio, twilio_voice, botframework, webexteams, hangouts, mattermost, rocketchat, audiocodes, jambonz, genesys or <module-path>.<ClassName>',
    );
  });
});
