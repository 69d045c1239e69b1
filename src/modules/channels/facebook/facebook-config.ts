import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials } from 'src/modules/channels/credentials';
import { FacebookConnector } from './facebook-connector';

export const FACEBOOK_KEY = 'facebook';

/** The settings of the `facebook` entry (Rasa's FacebookInput.from_credentials). */
export interface FacebookSettings {
  /** The verify token Meta sends with the subscription check (`hub.verify_token`). */
  readonly verify: string;
  /** The app secret every webhook request is signed with. */
  readonly secret: string;
  readonly pageAccessToken: string;
  readonly http: ConnectorHttpSettings;
}

export const FACEBOOK_KEYS = ['verify', 'secret', 'page-access-token', ...CONNECTOR_KEYS] as const;

/** The Graph API the Send API is called on, unless `api_url` says otherwise. */
export const GRAPH_API_URL = 'https://graph.facebook.com/v21.0';

export function facebookSettings(file: string, settings: ChannelCredentials): FacebookSettings {
  const required = (key: string, why: string) =>
    requiredSetting(file, FACEBOOK_KEY, settings, key, why);
  return {
    verify: required('verify', 'the verify token of the webhook subscription'),
    secret: required('secret', 'the app secret every webhook request is signed with'),
    pageAccessToken: required('page-access-token', 'the token answers are sent with'),
    http: connectorHttpSettings(file, FACEBOOK_KEY, settings, GRAPH_API_URL),
  };
}

/** The `facebook` connector (see `connectors.ts`). */
export const FACEBOOK_CONNECTOR = connectorDefinition({
  key: FACEBOOK_KEY,
  keys: FACEBOOK_KEYS,
  routes: ['webhook'],
  settings: facebookSettings,
  create: (settings, input, ingress) => new FacebookConnector(settings, input, ingress),
});
