import {
  type ConnectorHttpSettings,
  connectorHttpSettings,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { HangoutsConnector } from './hangouts-connector';

export const HANGOUTS_KEY = 'hangouts';

/** Where Google publishes the x509 certificates Google Chat signs its bearer tokens with. */
export const HANGOUTS_CERTS_URL =
  'https://www.googleapis.com/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com';

/** The settings of the `hangouts` entry (Rasa's HangoutsInput, its keys and one of Parley's). */
export interface HangoutsSettings {
  /** The Google Cloud project number: the audience of Google Chat's tokens; null: unchecked. */
  readonly projectId: string | null;
  /** The text of the user message when the bot is added to a direct message. */
  readonly userAddedIntent: string;
  /** The text of the user message when the bot is added to a room. */
  readonly roomAddedIntent: string;
  /** The text of the user message when the bot is removed from a space. */
  readonly removedIntent: string;
  /** Parley's: where the signing certificates are read. */
  readonly certsUrl: string;
  /** `timeout` of the certificates' request; answers go in the HTTP answer, so no `api_url`. */
  readonly http: ConnectorHttpSettings;
}

export const HANGOUTS_KEYS = [
  'project_id',
  'hangouts_user_added_intent_name',
  'hangouts_room_added_intent_name',
  'hangouts_removed_intent_name',
  'certs_url',
  'timeout',
] as const;

export function hangoutsSettings(file: string, settings: ChannelCredentials): HangoutsSettings {
  const s = (key: string) => stringSetting(file, HANGOUTS_KEY, settings, key);
  // YAML reads an unquoted project number as a number; Google's `aud` claim is its digits.
  const rawProject = settings?.project_id;
  const projectId =
    typeof rawProject === 'number' && Number.isSafeInteger(rawProject)
      ? String(rawProject)
      : s('project_id');
  const certsUrl = s('certs_url') ?? HANGOUTS_CERTS_URL;
  if (!URL.canParse(certsUrl) || !/^https?:$/.test(new URL(certsUrl).protocol)) {
    throw invalid(file, `${HANGOUTS_KEY}.certs_url`, `must be an http(s) URL, got "${certsUrl}"`);
  }
  return {
    projectId: projectId === '' ? null : projectId,
    userAddedIntent: s('hangouts_user_added_intent_name') ?? '/user_added',
    roomAddedIntent: s('hangouts_room_added_intent_name') ?? '/room_added',
    removedIntent: s('hangouts_removed_intent_name') ?? '/bot_removed',
    certsUrl,
    http: connectorHttpSettings(
      file,
      HANGOUTS_KEY,
      { timeout: settings?.timeout },
      'https://chat.googleapis.com',
    ),
  };
}

/** The `hangouts` connector (see `connectors.ts`). */
export const HANGOUTS_CONNECTOR = connectorDefinition({
  key: HANGOUTS_KEY,
  keys: HANGOUTS_KEYS,
  routes: ['webhook'],
  settings: hangoutsSettings,
  warnings: (settings: HangoutsSettings) =>
    settings.projectId === null
      ? [
          'no project_id: Google Chat events are accepted without checking their bearer token, as in Rasa; set project_id to the project number',
        ]
      : [],
  create: (settings, input, ingress) => new HangoutsConnector(settings, input, ingress),
});
