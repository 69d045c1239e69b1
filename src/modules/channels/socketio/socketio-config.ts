import {
  booleanSetting,
  type ChannelCredentials,
  invalid,
  stringSetting,
} from 'src/modules/channels/credentials';

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

/** The settings of the `socketio` entry. */
export const SOCKETIO_KEYS = [
  'user_message_evt',
  'bot_message_evt',
  'namespace',
  'session_persistence',
  'socketio_path',
  'jwt_key',
  'jwt_method',
  'metadata_key',
] as const;

/** Reads the `socketio` entry of credentials.yml. */
export function socketIoSettings(file: string, settings: ChannelCredentials): SocketIoSettings {
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
