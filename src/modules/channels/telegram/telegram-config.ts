import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { TelegramConnector } from './telegram-connector';

export const TELEGRAM_KEY = 'telegram';

/** The settings of the `telegram` entry (Rasa's TelegramInput.from_credentials, plus one). */
export interface TelegramSettings {
  readonly accessToken: string;
  /** The bot's username: a message is handled only when getMe answers this name. */
  readonly verify: string;
  /** Where Telegram is told to send updates (setWebhook at start); null: not set. */
  readonly webhookUrl: string | null;
  /** Parley's: the secret token given to setWebhook and required on every update. */
  readonly secretToken: string | null;
  readonly http: ConnectorHttpSettings;
}

export const TELEGRAM_KEYS = [
  'access_token',
  'verify',
  'webhook_url',
  'secret_token',
  ...CONNECTOR_KEYS,
] as const;

export function telegramSettings(file: string, settings: ChannelCredentials): TelegramSettings {
  const webhookUrl = stringSetting(file, TELEGRAM_KEY, settings, 'webhook_url');
  if (
    webhookUrl !== null &&
    (!URL.canParse(webhookUrl) || !/^https?:$/.test(new URL(webhookUrl).protocol))
  ) {
    throw invalid(
      file,
      `${TELEGRAM_KEY}.webhook_url`,
      `must be an http(s) URL, got "${webhookUrl}"`,
    );
  }
  const secretToken = stringSetting(file, TELEGRAM_KEY, settings, 'secret_token');
  // Telegram's own rule for the secret token: 1-256 characters of A-Z, a-z, 0-9, _ and -.
  if (secretToken !== null && !/^[A-Za-z0-9_-]{1,256}$/.test(secretToken)) {
    throw invalid(
      file,
      `${TELEGRAM_KEY}.secret_token`,
      'must be 1-256 characters of A-Z, a-z, 0-9, _ and -',
    );
  }
  return {
    accessToken: requiredSetting(
      file,
      TELEGRAM_KEY,
      settings,
      'access_token',
      'the bot token BotFather gave',
    ),
    verify: requiredSetting(file, TELEGRAM_KEY, settings, 'verify', 'the username of the bot'),
    webhookUrl,
    secretToken,
    http: connectorHttpSettings(file, TELEGRAM_KEY, settings, 'https://api.telegram.org'),
  };
}

/** The `telegram` connector (see `connectors.ts`). */
export const TELEGRAM_CONNECTOR = connectorDefinition({
  key: TELEGRAM_KEY,
  keys: TELEGRAM_KEYS,
  warnings: (settings: TelegramSettings) =>
    settings.secretToken === null
      ? [
          'no secret_token: updates are accepted without X-Telegram-Bot-Api-Secret-Token, as in Rasa; set secret_token so only Telegram can reach the bot',
        ]
      : [],
  routes: ['webhook', 'set_webhook'],
  settings: telegramSettings,
  create: (settings, input, ingress) => new TelegramConnector(settings, input, ingress),
});
