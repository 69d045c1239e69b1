import {
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { BotFrameworkConnector } from './botframework-connector';

export const BOTFRAMEWORK_KEY = 'botframework';

/** Where Microsoft publishes the Bot Connector's OpenID metadata (its signing keys). */
export const BOTFRAMEWORK_OPENID_METADATA_URL =
  'https://login.botframework.com/v1/.well-known/openidconfiguration';

/** Microsoft's token endpoint for bots (client credentials of the app). */
export const BOTFRAMEWORK_LOGIN_URL =
  'https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token';

/** The settings of the `botframework` entry (Rasa's BotFrameworkInput.from_credentials, plus two). */
export interface BotFrameworkSettings {
  /** The Microsoft App ID: the audience of every token the Bot Connector sends. */
  readonly appId: string;
  /** The app's client secret, for the token the replies go out with. */
  readonly appPassword: string;
  /** Parley's: the OpenID metadata document naming the keys (`jwks_uri`). */
  readonly openidMetadataUrl: string;
  /** Parley's: the OAuth 2.0 token endpoint of the replies' token. */
  readonly loginUrl: string;
  /** `timeout` of each call; replies go to the activity's `serviceUrl`, so no `api_url`. */
  readonly http: ConnectorHttpSettings;
}

export const BOTFRAMEWORK_KEYS = [
  'app_id',
  'app_password',
  'openid_metadata_url',
  'login_url',
  'timeout',
] as const;

function urlSetting(
  file: string,
  settings: ChannelCredentials,
  key: string,
  fallback: string,
): string {
  const url = stringSetting(file, BOTFRAMEWORK_KEY, settings, key) ?? fallback;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw invalid(file, `${BOTFRAMEWORK_KEY}.${key}`, `must be an http(s) URL, got "${url}"`);
  }
  return url;
}

export function botFrameworkSettings(
  file: string,
  settings: ChannelCredentials,
): BotFrameworkSettings {
  return {
    appId: requiredSetting(
      file,
      BOTFRAMEWORK_KEY,
      settings,
      'app_id',
      'the Microsoft App ID every request from the Bot Connector is addressed to',
    ),
    appPassword: requiredSetting(
      file,
      BOTFRAMEWORK_KEY,
      settings,
      'app_password',
      'the app secret the answers are sent with',
    ),
    openidMetadataUrl: urlSetting(
      file,
      settings,
      'openid_metadata_url',
      BOTFRAMEWORK_OPENID_METADATA_URL,
    ),
    loginUrl: urlSetting(file, settings, 'login_url', BOTFRAMEWORK_LOGIN_URL),
    // Only the timeout: the API base of every reply is the activity's serviceUrl.
    http: connectorHttpSettings(
      file,
      BOTFRAMEWORK_KEY,
      { timeout: settings?.timeout },
      'https://api.botframework.com',
    ),
  };
}

/** The `botframework` connector (see `connectors.ts`). */
export const BOTFRAMEWORK_CONNECTOR = connectorDefinition({
  key: BOTFRAMEWORK_KEY,
  keys: BOTFRAMEWORK_KEYS,
  routes: ['webhook'],
  settings: botFrameworkSettings,
  create: (settings, input, ingress) => new BotFrameworkConnector(settings, input, ingress),
});
