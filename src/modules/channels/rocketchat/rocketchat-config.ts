import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  optionalSecret,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid } from 'src/modules/channels/credentials';
import { RocketChatConnector } from './rocketchat-connector';

export const ROCKETCHAT_KEY = 'rocketchat';

/** The settings of the `rocketchat` entry (Rasa's RocketChatInput.from_credentials, plus one). */
export interface RocketChatSettings {
  /** The bot user's name (its own messages are not user messages) and password. */
  readonly user: string;
  readonly password: string;
  /** Parley's: the token of the outgoing integration (or the livechat webhook's secret). */
  /** The outgoing integration's token, or null (requests not checked, as in Rasa). */
  readonly webhookToken: string | null;
  /** `server_url` (`https://chat.example.com`; the REST API is below `/api/v1`), timeout. */
  readonly http: ConnectorHttpSettings;
}

export const ROCKETCHAT_KEYS = [
  'user',
  'password',
  'server_url',
  'webhook_token',
  ...CONNECTOR_KEYS,
];

export function rocketChatSettings(file: string, settings: ChannelCredentials): RocketChatSettings {
  const serverUrl = requiredSetting(
    file,
    ROCKETCHAT_KEY,
    settings,
    'server_url',
    'the URL of the Rocket.Chat server, e.g. https://chat.example.com',
  );
  if (!URL.canParse(serverUrl) || !/^https?:$/.test(new URL(serverUrl).protocol)) {
    throw invalid(
      file,
      `${ROCKETCHAT_KEY}.server_url`,
      `must be an http(s) URL, got "${serverUrl}"`,
    );
  }
  return {
    user: requiredSetting(file, ROCKETCHAT_KEY, settings, 'user', 'the bot user answers come from'),
    password: requiredSetting(
      file,
      ROCKETCHAT_KEY,
      settings,
      'password',
      'the bot user logs in with it',
    ),
    // Rasa reads no such key and takes any request: with it, Parley refuses requests without it.
    webhookToken: optionalSecret(file, ROCKETCHAT_KEY, settings, 'webhook_token'),
    http: connectorHttpSettings(file, ROCKETCHAT_KEY, settings, serverUrl),
  };
}

/** The `rocketchat` connector (see `connectors.ts`). */
export const ROCKETCHAT_CONNECTOR = connectorDefinition({
  key: ROCKETCHAT_KEY,
  keys: ROCKETCHAT_KEYS,
  routes: ['webhook'],
  settings: rocketChatSettings,
  warnings: (settings: RocketChatSettings) =>
    settings.webhookToken === null
      ? [
          "no webhook_token: integration requests are accepted without their token, as in Rasa; set webhook_token to the outgoing integration's token",
        ]
      : [],
  create: (settings, input, ingress) => new RocketChatConnector(settings, input, ingress),
});
