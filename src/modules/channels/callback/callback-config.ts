import {
  type ChannelCredentials,
  invalid,
  stringMapSetting,
  stringSetting,
} from 'src/modules/channels/credentials';

/** Where the callback channel POSTs bot messages (Rasa's EndpointConfig subset). */
export interface CallbackEndpoint {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly params: Record<string, string>;
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
  readonly timeoutMs: number;
}

/** The settings of the `callback` entry. */
export const CALLBACK_KEYS = [
  'url',
  'headers',
  'params',
  'basic_auth',
  'token',
  'token_name',
  'timeout',
] as const;

/** Reads the `callback` entry of credentials.yml (Rasa's CallbackInput.from_credentials). */
export function callbackEndpoint(file: string, settings: ChannelCredentials): CallbackEndpoint {
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
