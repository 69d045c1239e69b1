import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { findUserModule, requireUserModule } from 'src/platform/modules/user-module';
import {
  booleanSetting,
  type ChannelCredentials,
  type CredentialsFile,
  invalid,
  stringMapSetting,
  stringSetting,
  unknownKeys,
} from './credentials';
import { channelName, type CustomChannel, type CustomChannelClass } from './custom-channel';

/** Where the callback channel POSTs bot messages (Rasa's EndpointConfig subset). */
export interface CallbackEndpoint {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly params: Record<string, string>;
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
  readonly timeoutMs: number;
}

/** Settings of the socketio channel (Rasa's SocketIOInput.from_credentials). */
export interface SocketIoSettings {
  readonly userMessageEvt: string;
  readonly botMessageEvt: string;
  readonly namespace: string | null;
  readonly sessionPersistence: boolean;
  readonly socketioPath: string;
  readonly jwtKey: string | null;
  readonly jwtMethod: string;
  readonly metadataKey: string;
}

/** One channel configured by credentials.yml. */
export type ConfiguredChannel =
  | { readonly kind: 'rest'; readonly name: 'rest' }
  | { readonly kind: 'callback'; readonly name: 'callback'; readonly endpoint: CallbackEndpoint }
  | { readonly kind: 'socketio'; readonly name: 'socketio'; readonly settings: SocketIoSettings }
  | { readonly kind: 'custom'; readonly name: string; readonly channel: CustomChannel }
  | { readonly kind: 'registered'; readonly name: string; readonly settings: ChannelCredentials };

/** The channels of one server, with any warnings found while reading them. */
export interface ChannelSetup {
  readonly channels: readonly ConfiguredChannel[];
  readonly warnings: readonly string[];
}

/** A channel another Parley module serves (e.g. a voice connector), known by its key. */
export interface RegisteredChannel {
  readonly name: string;
  /** Throws (naming the key) when the settings are unusable. */
  validate?(settings: ChannelCredentials, file: string): void;
}

const registered = new Map<string, RegisteredChannel>();

/**
 * Registers a channel key that another module serves, so `credentials.yml` may list it. Call it
 * at module load (top level of the module's file), before the app is built.
 */
export function registerChannel(channel: RegisteredChannel): void {
  registered.set(channel.name, channel);
}

/**
 * Rasa's built-in channel names (`rasa.core.channels.BUILTIN_CHANNELS`, OSS and Pro) that
 * Parley does not serve itself: `credentials.yml` may list them, as real projects do (Rasa
 * X's `rasa:`, `slack:` …); each is skipped with one warning and the server starts.
 */
const RASA_ONLY = [
  'rasa',
  'slack',
  'telegram',
  'facebook',
  'twilio',
  'twilio_voice',
  'twilio_media_streams',
  'botframework',
  'mattermost',
  'rocketchat',
  'webexteams',
  'hangouts',
  'audiocodes',
  'audiocodes_stream',
  'jambonz',
  'genesys',
  'vier_cvg',
  'browser_audio',
  'studio_chat',
  'cmdline',
];

const CALLBACK_KEYS = [
  'url',
  'headers',
  'params',
  'basic_auth',
  'token',
  'token_name',
  'timeout',
] as const;
const SOCKETIO_KEYS = [
  'user_message_evt',
  'bot_message_evt',
  'namespace',
  'session_persistence',
  'socketio_path',
  'jwt_key',
  'jwt_method',
  'metadata_key',
] as const;

const NAME = /^[A-Za-z0-9_-]+$/;
const CUSTOM_KEY = /^(.+)\.([A-Za-z_$][\w$]*)$/;

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
    } else if (registered.has(key)) {
      registered.get(key)?.validate?.(settings, file);
      channels.push({ kind: 'registered', name: key, settings });
    } else if (RASA_ONLY.includes(key)) {
      // Rasa's `_create_single_channel` would build it; Parley serves no such webhook.
      warnings.push(
        `credentials ${file}: "${key}" is a Rasa channel that Parley does not provide; skipped (its webhook is not served; write it as a custom channel, see the README, "Channels")`,
      );
    } else if (CUSTOM_KEY.test(key)) {
      const channel = loadCustomChannel(file, key, settings, cwd);
      channels.push({ kind: 'custom', name: channelName(channel), channel });
    } else {
      throw invalid(
        file,
        key,
        `is not a known channel: use rest, callback, socketio${[...registered.keys()].map((n) => `, ${n}`).join('')} or <module-path>.<ClassName> of a custom channel`,
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

function callbackEndpoint(file: string, settings: ChannelCredentials): CallbackEndpoint {
  const url = stringSetting(file, 'callback', settings, 'url');
  if (url === null) {
    throw invalid(
      file,
      'callback.url',
      'is missing: the callback channel POSTs bot messages to this URL',
    );
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw invalid(file, 'callback.url', `must be an http(s) URL, got "${url}"`);
  }
  const params = stringMapSetting(file, 'callback', settings, 'params');
  const token = stringSetting(file, 'callback', settings, 'token');
  if (token !== null) {
    params[stringSetting(file, 'callback', settings, 'token_name') ?? 'token'] = token;
  }
  let basicAuth: CallbackEndpoint['basicAuth'] = null;
  const auth = settings?.basic_auth;
  if (auth !== undefined && auth !== null) {
    const a = auth as Record<string, unknown>;
    if (
      typeof auth !== 'object' ||
      typeof a.username !== 'string' ||
      typeof a.password !== 'string'
    ) {
      throw invalid(
        file,
        'callback.basic_auth',
        'must be a mapping with "username" and "password"',
      );
    }
    basicAuth = { username: a.username, password: a.password };
  }
  const timeout = settings?.timeout;
  if (
    timeout !== undefined &&
    timeout !== null &&
    (typeof timeout !== 'number' || !(timeout > 0))
  ) {
    throw invalid(file, 'callback.timeout', 'must be a positive number of seconds');
  }
  return {
    url,
    headers: stringMapSetting(file, 'callback', settings, 'headers'),
    params,
    basicAuth,
    // Rasa's EndpointConfig default: 5 minutes.
    timeoutMs: typeof timeout === 'number' ? timeout * 1000 : 300_000,
  };
}

function socketIoSettings(file: string, settings: ChannelCredentials): SocketIoSettings {
  const s = (key: string): string | null => stringSetting(file, 'socketio', settings, key);
  const nonEmpty = (key: string, fallback: string): string => {
    const value = s(key) ?? fallback;
    if (value.trim().length === 0) throw invalid(file, `socketio.${key}`, 'must not be empty');
    return value;
  };
  const path = nonEmpty('socketio_path', '/socket.io');
  if (!path.startsWith('/')) {
    throw invalid(file, 'socketio.socketio_path', `must start with "/", got "${path}"`);
  }
  const namespace = s('namespace');
  if (namespace !== null && !namespace.startsWith('/')) {
    throw invalid(file, 'socketio.namespace', `must start with "/", got "${namespace}"`);
  }
  return {
    userMessageEvt: nonEmpty('user_message_evt', 'user_uttered'),
    botMessageEvt: nonEmpty('bot_message_evt', 'bot_uttered'),
    namespace,
    sessionPersistence: booleanSetting(file, 'socketio', settings, 'session_persistence', false),
    socketioPath: path,
    jwtKey: s('jwt_key'),
    jwtMethod: nonEmpty('jwt_method', 'HS256'),
    metadataKey: nonEmpty('metadata_key', 'metadata'),
  };
}

/**
 * Loads `<module-path>.<ClassName>`: a dotted module path (`addons.my_channel.MyChannel` →
 * `addons/my_channel`) or a path with slashes (`./addons/my-channel.MyChannel`), resolved from
 * the working directory, then from the credentials file's folder, then as an installed package.
 */
function loadCustomChannel(
  file: string,
  key: string,
  settings: ChannelCredentials,
  cwd: string,
): CustomChannel {
  const match = CUSTOM_KEY.exec(key);
  const modulePath = match?.[1] ?? key;
  const className = match?.[2] ?? key;
  const asPath = modulePath.includes('/') ? modulePath : modulePath.replace(/\./g, '/');
  const candidates = isAbsolute(asPath)
    ? [asPath]
    : [resolve(cwd, asPath), resolve(dirname(resolve(file)), asPath)];
  let resolved: string | null = null;
  for (const candidate of candidates) {
    resolved = findUserModule(candidate);
    if (resolved !== null) break;
  }
  if (resolved === null && !modulePath.startsWith('.') && !isAbsolute(modulePath)) {
    try {
      resolved = require.resolve(modulePath, { paths: [cwd] });
    } catch {
      // reported below
    }
  }
  if (resolved === null) {
    throw invalid(
      file,
      key,
      `names a custom channel module that was not found (looked for ${candidates.map((c) => `${c}(.js|.ts)`).join(', ')}${existsSync(cwd) ? '' : '; working directory missing'})`,
    );
  }
  let exported: unknown;
  try {
    const mod = requireUserModule(resolved);
    exported = mod[className] ?? (mod.default as Record<string, unknown> | undefined)?.[className];
  } catch (e) {
    throw invalid(file, key, `custom channel module failed to load: ${(e as Error).message}`);
  }
  if (typeof exported !== 'function') {
    throw invalid(file, key, `custom channel module ${resolved} exports no class "${className}"`);
  }
  const cls = exported as CustomChannelClass;
  let channel: CustomChannel;
  try {
    channel =
      typeof cls.fromCredentials === 'function' ? cls.fromCredentials(settings) : new cls(settings);
  } catch (e) {
    throw invalid(
      file,
      key,
      `custom channel could not be built from its settings: ${(e as Error).message}`,
    );
  }
  let name: unknown;
  try {
    name = channel !== null && typeof channel === 'object' ? channelName(channel) : undefined;
  } catch (e) {
    throw invalid(file, key, `custom channel's name() failed: ${(e as Error).message}`);
  }
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw invalid(
      file,
      key,
      `custom channel needs a "name" (letters, digits, _ or -) for its URL /webhooks/<name>/webhook, got ${JSON.stringify(name)}`,
    );
  }
  if (['rest', 'callback', 'socketio', ...registered.keys()].includes(name)) {
    throw invalid(file, key, `custom channel name "${name}" is taken by a built-in channel`);
  }
  return channel;
}
