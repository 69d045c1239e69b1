import { requiredSetting } from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { booleanSetting, type ChannelCredentials, invalid } from 'src/modules/channels/credentials';
import { AudiocodesConnector } from './audiocodes-connector';

export const AUDIOCODES_KEY = 'audiocodes';

/** The settings of the `audiocodes` entry (Rasa Pro's AudiocodesInput.from_credentials). */
export interface AudiocodesSettings {
  /** The bot's token in VoiceAI Connect: every request carries `Authorization: Bearer <token>`. */
  readonly token: string;
  /** The WebSocket flavour (Rasa's default): bot activities go over `websocketURL`. */
  readonly useWebsocket: boolean;
  /** Seconds VoiceAI Connect waits between keep-alives (`expiresSeconds`). */
  readonly keepAliveSeconds: number;
  /** A conversation silent for `keep_alive` × this is forgotten. */
  readonly keepAliveExpirationFactor: number;
}

export const AUDIOCODES_KEYS = [
  'token',
  'use_websocket',
  'keep_alive',
  'keep_alive_expiration_factor',
];

function numberSetting(
  file: string,
  settings: ChannelCredentials,
  key: string,
  fallback: number,
  min: number,
  rule: string,
): number {
  const value = settings?.[key];
  if (value === undefined || value === null) return fallback;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    (min === 0 && value === 0)
  ) {
    throw invalid(file, `${AUDIOCODES_KEY}.${key}`, rule);
  }
  return value;
}

export function audiocodesSettings(file: string, settings: ChannelCredentials): AudiocodesSettings {
  return {
    useWebsocket: booleanSetting(file, AUDIOCODES_KEY, settings, 'use_websocket', true),
    token: requiredSetting(
      file,
      AUDIOCODES_KEY,
      settings,
      'token',
      'the token VoiceAI Connect sends as "Authorization: Bearer <token>"',
    ),
    keepAliveSeconds: numberSetting(
      file,
      settings,
      'keep_alive',
      120,
      0,
      'must be a positive number of seconds',
    ),
    keepAliveExpirationFactor: numberSetting(
      file,
      settings,
      'keep_alive_expiration_factor',
      1.5,
      1,
      'must be a number of at least 1',
    ),
  };
}

/** The `audiocodes` connector (see `connectors.ts`). */
export const AUDIOCODES_CONNECTOR = connectorDefinition({
  key: AUDIOCODES_KEY,
  keys: AUDIOCODES_KEYS,
  routes: [
    'webhook',
    'conversation/:conversation_id/activities',
    'conversation/:conversation_id/disconnect',
    'conversation/:conversation_id/keepalive',
  ],
  settings: audiocodesSettings,
  create: (settings, input) => new AudiocodesConnector(settings, input),
});
