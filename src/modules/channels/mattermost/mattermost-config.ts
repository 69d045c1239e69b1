import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  optionalSecret,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { MattermostConnector } from './mattermost-connector';

export const MATTERMOST_KEY = 'mattermost';

/** The settings of the `mattermost` entry (Rasa's MattermostInput.from_credentials, plus one). */
export interface MattermostSettings {
  /** The bot account's access token: answers are posted with it. */
  readonly token: string;
  /** Parley's: the token Mattermost puts in every outgoing-webhook request. */
  /** The outgoing webhook's token, or null (requests not checked, as in Rasa). */
  readonly webhookToken: string | null;
  /** This webhook's public URL, where message buttons send their clicks; null: not set. */
  readonly webhookUrl: string | null;
  /** `url` (the REST API v4 base, `https://chat.example.com/api/v4`) and the timeout. */
  readonly http: ConnectorHttpSettings;
}

export const MATTERMOST_KEYS = ['url', 'token', 'webhook_url', 'webhook_token', ...CONNECTOR_KEYS];

const isHttpUrl = (url: string) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);

export function mattermostSettings(file: string, settings: ChannelCredentials): MattermostSettings {
  const url = requiredSetting(
    file,
    MATTERMOST_KEY,
    settings,
    'url',
    'the REST API base of the Mattermost server, e.g. https://chat.example.com/api/v4',
  );
  if (!isHttpUrl(url)) {
    throw invalid(file, `${MATTERMOST_KEY}.url`, `must be an http(s) URL, got "${url}"`);
  }
  const webhookUrl = stringSetting(file, MATTERMOST_KEY, settings, 'webhook_url');
  if (webhookUrl !== null && !isHttpUrl(webhookUrl)) {
    throw invalid(
      file,
      `${MATTERMOST_KEY}.webhook_url`,
      `must be an http(s) URL, got "${webhookUrl}"`,
    );
  }
  return {
    token: requiredSetting(
      file,
      MATTERMOST_KEY,
      settings,
      'token',
      'the access token of the bot account answers are posted with',
    ),
    // Rasa reads no such key and takes any request: with it, Parley refuses requests without it.
    webhookToken: optionalSecret(file, MATTERMOST_KEY, settings, 'webhook_token'),
    webhookUrl,
    http: connectorHttpSettings(file, MATTERMOST_KEY, settings, url),
  };
}

/** The `mattermost` connector (see `connectors.ts`). */
export const MATTERMOST_CONNECTOR = connectorDefinition({
  key: MATTERMOST_KEY,
  keys: MATTERMOST_KEYS,
  routes: ['webhook'],
  settings: mattermostSettings,
  warnings: (settings: MattermostSettings) =>
    settings.webhookToken === null
      ? [
          "no webhook_token: outgoing webhook requests are accepted without their token, as in Rasa; set webhook_token to the outgoing webhook's token",
        ]
      : [],
  create: (settings, input, ingress) => new MattermostConnector(settings, input, ingress),
});
