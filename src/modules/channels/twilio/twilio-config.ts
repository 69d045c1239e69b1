import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { TwilioConnector } from './twilio-connector';

export const TWILIO_KEY = 'twilio';

/** The settings of the `twilio` entry (Rasa's TwilioInput.from_credentials, plus one). */
export interface TwilioSettings {
  readonly accountSid: string;
  /** Signs every webhook request (X-Twilio-Signature) and authenticates the REST API calls. */
  readonly authToken: string;
  /** The sender of the answers: a phone number, or `whatsapp:+…` for WhatsApp. */
  readonly twilioNumber: string;
  /**
   * Parley's: the public URL Twilio calls (the signature covers it); null: rebuilt from the
   * request, which only works when no proxy changes the scheme, host or path.
   */
  readonly webhookUrl: string | null;
  readonly http: ConnectorHttpSettings;
}

export const TWILIO_KEYS = [
  'account_sid',
  'auth_token',
  'twilio_number',
  'webhook_url',
  ...CONNECTOR_KEYS,
] as const;

/** Twilio's REST API, unless `api_url` says otherwise. */
export const TWILIO_API_URL = 'https://api.twilio.com';

/** Reads an optional `webhook_url` (an http(s) URL) of a Twilio entry. */
export function webhookUrlSetting(
  file: string,
  channel: string,
  settings: ChannelCredentials,
): string | null {
  const url = stringSetting(file, channel, settings, 'webhook_url');
  if (url !== null && (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))) {
    throw invalid(file, `${channel}.webhook_url`, `must be an http(s) URL, got "${url}"`);
  }
  return url;
}

export function twilioSettings(file: string, settings: ChannelCredentials): TwilioSettings {
  const required = (key: string, why: string) =>
    requiredSetting(file, TWILIO_KEY, settings, key, why);
  return {
    accountSid: required('account_sid', 'the account the Messages API is called for'),
    authToken: required(
      'auth_token',
      'it verifies X-Twilio-Signature and authenticates the Messages API',
    ),
    twilioNumber: required('twilio_number', 'the number (or whatsapp:+…) answers are sent from'),
    webhookUrl: webhookUrlSetting(file, TWILIO_KEY, settings),
    http: connectorHttpSettings(file, TWILIO_KEY, settings, TWILIO_API_URL),
  };
}

/** The `twilio` connector (see `connectors.ts`). */
export const TWILIO_CONNECTOR = connectorDefinition({
  key: TWILIO_KEY,
  keys: TWILIO_KEYS,
  routes: ['webhook'],
  settings: twilioSettings,
  create: (settings, input, ingress) => new TwilioConnector(settings, input, ingress),
});
