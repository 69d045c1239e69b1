import { parseVoiceConnectorConfig } from 'src/core';
import { CALLBACK_KEYS, type CallbackEndpoint, callbackEndpoint } from './callback/callback-config';
import { type ConnectorDefinition } from './connector/definition';
import { CONNECTORS } from './connectors';
import { type ChannelCredentials, type CredentialsFile, invalid, unknownKeys } from './credentials';
import { channelName, type CustomChannel } from './custom/custom-channel';
import { CUSTOM_KEY, loadCustomChannel } from './custom/custom-channel-loader';
import { SOCKETIO_KEYS, type SocketIoSettings, socketIoSettings } from './socketio/socketio-config';

/**
 * The key of the voice connector in credentials.yml (Rasa's `genesys` channel), also its URL
 * segment. The voice gateway module serves it; this reader accepts the key and checks its
 * settings with the same validation (core's parseVoiceConnectorConfig).
 */
export const VOICE_CONNECTOR_KEY = 'genesys';

/** The names the built-in channels serve at `/webhooks/<name>/`; custom channels take others. */
const BUILT_IN = [
  'rest',
  'callback',
  'socketio',
  ...CONNECTORS.map((c) => c.key),
  VOICE_CONNECTOR_KEY,
];

/** One channel configured by credentials.yml. */
export type ConfiguredChannel =
  | { readonly kind: 'rest'; readonly name: 'rest' }
  | { readonly kind: 'callback'; readonly name: 'callback'; readonly endpoint: CallbackEndpoint }
  | { readonly kind: 'socketio'; readonly name: 'socketio'; readonly settings: SocketIoSettings }
  | { readonly kind: 'custom'; readonly name: string; readonly channel: CustomChannel }
  | {
      readonly kind: 'connector';
      readonly name: string;
      readonly definition: ConnectorDefinition;
      readonly settings: unknown;
    }
  | {
      readonly kind: 'voice';
      readonly name: typeof VOICE_CONNECTOR_KEY;
      readonly settings: ChannelCredentials;
    };

/** The channels of one server, with any warnings found while reading them. */
export interface ChannelSetup {
  readonly channels: readonly ConfiguredChannel[];
  readonly warnings: readonly string[];
}

/**
 * Rasa's built-in channel names (`rasa.core.channels.BUILTIN_CHANNELS`, OSS and Pro) that
 * Parley does not serve itself: `credentials.yml` may list them, as real projects do (Rasa
 * X's `rasa:`, `slack:` …); each is skipped with one warning and the server starts.
 */
const RASA_ONLY = [
  'rasa',
  'twilio_media_streams',
  'audiocodes_stream',
  'jambonz_stream',
  'vier_cvg',
  'browser_audio',
  'studio_chat',
  'cmdline',
];

/**
 * Builds the configured channels from `credentials.yml` (see readCredentialsFile). Unknown
 * channel names, unloadable custom channels and bad settings throw `CONFIG.INVALID` naming the
 * key; unknown settings of a built-in channel are warnings (Rasa ignores them too).
 */
export function configureChannels(
  credentials: CredentialsFile,
  file: string,
  cwd: string = process.cwd(),
): ChannelSetup {
  const channels: ConfiguredChannel[] = [];
  const warnings: string[] = [];
  const warnUnknown = (
    name: string,
    settings: ChannelCredentials,
    known: readonly string[],
  ): void => {
    for (const key of unknownKeys(settings, known)) {
      warnings.push(`credentials ${file}: "${name}.${key}" is not a setting of ${name}; ignored`);
    }
  };
  for (const [key, settings] of credentials) {
    if (key === 'rest') {
      warnUnknown(key, settings, []);
      channels.push({ kind: 'rest', name: 'rest' });
    } else if (key === 'callback') {
      warnUnknown(key, settings, CALLBACK_KEYS);
      channels.push({
        kind: 'callback',
        name: 'callback',
        endpoint: callbackEndpoint(file, settings),
      });
    } else if (key === 'socketio') {
      warnUnknown(key, settings, SOCKETIO_KEYS);
      channels.push({
        kind: 'socketio',
        name: 'socketio',
        settings: socketIoSettings(file, settings),
      });
    } else if (CONNECTORS.some((c) => c.key === key)) {
      const definition = CONNECTORS.find((c) => c.key === key)!;
      warnUnknown(key, settings, definition.keys);
      const checked = definition.settings(file, settings);
      for (const warning of definition.warnings?.(checked) ?? []) {
        warnings.push(`credentials ${file}: "${key}": ${warning}`);
      }
      channels.push({ kind: 'connector', name: key, definition, settings: checked });
    } else if (key === VOICE_CONNECTOR_KEY) {
      // Served by the voice gateway module, which reads the entry itself; checked here too so
      // a bad entry stops the start with the same message whichever module reads it first.
      parseVoiceConnectorConfig(settings, VOICE_CONNECTOR_KEY);
      channels.push({ kind: 'voice', name: VOICE_CONNECTOR_KEY, settings });
    } else if (RASA_ONLY.includes(key)) {
      // Rasa's `_create_single_channel` would build it; Parley serves no such webhook.
      warnings.push(
        `credentials ${file}: "${key}" is a Rasa channel that Parley does not provide; skipped (its webhook is not served; write it as a custom channel, see the README, "Channels")`,
      );
    } else if (CUSTOM_KEY.test(key)) {
      const channel = loadCustomChannel(file, key, settings, cwd, BUILT_IN);
      channels.push({ kind: 'custom', name: channelName(channel), channel });
    } else {
      throw invalid(
        file,
        key,
        `is not a known channel: use ${BUILT_IN.join(', ')} or <module-path>.<ClassName> of a custom channel`,
      );
    }
  }
  const seen = new Set<string>();
  for (const channel of channels) {
    if (seen.has(channel.name)) {
      throw invalid(file, channel.name, 'is configured twice (two entries serve the same webhook)');
    }
    seen.add(channel.name);
  }
  return { channels, warnings };
}
