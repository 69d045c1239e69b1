import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, stringSetting } from 'src/modules/channels/credentials';
import { WebexTeamsConnector } from './webexteams-connector';

export const WEBEXTEAMS_KEY = 'webexteams';

/** The settings of the `webexteams` entry (Rasa's WebexTeamsInput.from_credentials, plus one). */
export interface WebexTeamsSettings {
  /** The bot's access token: every API call carries it. */
  readonly accessToken: string;
  /** The room every answer goes to; null: the room the user wrote in. */
  readonly room: string | null;
  /**
   * Parley's: the secret the webhook was created with; Webex then signs each delivery
   * (`X-Spark-Signature`) and an unsigned or wrongly signed one is refused. Null: deliveries
   * are not authenticated, as in Rasa (a warning at start).
   */
  readonly webhookSecret: string | null;
  readonly http: ConnectorHttpSettings;
}

export const WEBEXTEAMS_KEYS = [
  'access_token',
  'room',
  'webhook_secret',
  ...CONNECTOR_KEYS,
] as const;

export function webexTeamsSettings(file: string, settings: ChannelCredentials): WebexTeamsSettings {
  const secret = stringSetting(file, WEBEXTEAMS_KEY, settings, 'webhook_secret');
  return {
    accessToken: requiredSetting(
      file,
      WEBEXTEAMS_KEY,
      settings,
      'access_token',
      'the bot access token the messages are read and answered with',
    ),
    room: stringSetting(file, WEBEXTEAMS_KEY, settings, 'room'),
    webhookSecret: secret === '' ? null : secret,
    http: connectorHttpSettings(file, WEBEXTEAMS_KEY, settings, 'https://webexapis.com'),
  };
}

/** The `webexteams` connector (see `connectors.ts`). */
export const WEBEXTEAMS_CONNECTOR = connectorDefinition({
  key: WEBEXTEAMS_KEY,
  keys: WEBEXTEAMS_KEYS,
  routes: ['webhook'],
  settings: webexTeamsSettings,
  warnings: (settings: WebexTeamsSettings) =>
    settings.webhookSecret === null
      ? [
          'no webhook_secret: deliveries are accepted without X-Spark-Signature, as in Rasa; create the Webex webhook with a secret and set it as webhook_secret',
        ]
      : [],
  create: (settings, input, ingress) => new WebexTeamsConnector(settings, input, ingress),
});
