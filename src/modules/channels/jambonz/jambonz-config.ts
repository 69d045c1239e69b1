import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { JambonzConnector } from './jambonz-connector';

export const JAMBONZ_KEY = 'jambonz';

/** The settings of the `jambonz` entry (Rasa Pro's JambonzVoiceReadyInput.from_credentials). */
export interface JambonzSettings {
  /** HTTP basic auth jambonz must send on the WebSocket upgrade; null: none asked. */
  readonly basicAuth: { readonly username: string; readonly password: string } | null;
}

export const JAMBONZ_KEYS = ['username', 'password'];

export function jambonzSettings(file: string, settings: ChannelCredentials): JambonzSettings {
  const username = stringSetting(file, JAMBONZ_KEY, settings, 'username');
  const password = stringSetting(file, JAMBONZ_KEY, settings, 'password');
  if ((username === null || username === '') !== (password === null || password === '')) {
    const missing = username === null || username === '' ? 'username' : 'password';
    throw invalid(
      file,
      `${JAMBONZ_KEY}.${missing}`,
      'is missing: username and password go together (basic auth of the WebSocket), or neither is set',
    );
  }
  return {
    basicAuth:
      username !== null && username !== '' && password !== null && password !== ''
        ? { username, password }
        : null,
  };
}

/** The `jambonz` connector (see `connectors.ts`): a WebSocket, no HTTP webhook. */
export const JAMBONZ_CONNECTOR = connectorDefinition({
  key: JAMBONZ_KEY,
  keys: JAMBONZ_KEYS,
  routes: ['websocket'],
  settings: jambonzSettings,
  create: (settings, input) => new JambonzConnector(settings, input),
});
