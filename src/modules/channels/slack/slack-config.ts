import {
  CONNECTOR_KEYS,
  type ConnectorHttpSettings,
  connectorHttpSettings,
  requiredSetting,
} from 'src/modules/channels/connector/connector';
import { connectorDefinition } from 'src/modules/channels/connector/definition';
import {
  booleanSetting,
  type ChannelCredentials,
  invalid,
  stringSetting,
} from 'src/modules/channels/credentials';
import { SlackConnector } from './slack-connector';

export const SLACK_KEY = 'slack';

/** How Slack messages map to conversations (Rasa's `conversation_granularity`). */
export type SlackGranularity = 'sender' | 'channel' | 'thread';

/** The settings of the `slack` entry (Rasa's SlackInput.from_credentials). */
export interface SlackSettings {
  readonly token: string;
  readonly signingSecret: string;
  readonly channel: string | null;
  readonly retryReasonHeader: string;
  readonly retryNumberHeader: string;
  readonly errorsIgnoreRetry: readonly string[];
  readonly useThreads: boolean;
  readonly granularity: SlackGranularity;
  readonly http: ConnectorHttpSettings;
}

export const SLACK_KEYS = [
  'slack_token',
  'slack_signing_secret',
  'slack_channel',
  'slack_retry_reason_header',
  'slack_retry_number_header',
  'errors_ignore_retry',
  'use_threads',
  'conversation_granularity',
  ...CONNECTOR_KEYS,
] as const;

export function slackSettings(file: string, settings: ChannelCredentials): SlackSettings {
  const s = (key: string) => stringSetting(file, SLACK_KEY, settings, key);
  const granularity = s('conversation_granularity') ?? 'sender';
  if (!['sender', 'channel', 'thread'].includes(granularity)) {
    throw invalid(
      file,
      `${SLACK_KEY}.conversation_granularity`,
      `must be sender, channel or thread, got "${granularity}"`,
    );
  }
  const ignore = settings?.errors_ignore_retry;
  if (
    ignore !== undefined &&
    ignore !== null &&
    !(Array.isArray(ignore) && ignore.every((e) => typeof e === 'string'))
  ) {
    throw invalid(file, `${SLACK_KEY}.errors_ignore_retry`, 'must be a list of strings');
  }
  return {
    token: requiredSetting(
      file,
      SLACK_KEY,
      settings,
      'slack_token',
      'the bot token answers go out with',
    ),
    // Rasa refuses to start without it: an unsigned Slack webhook would take anyone's messages.
    signingSecret: requiredSetting(
      file,
      SLACK_KEY,
      settings,
      'slack_signing_secret',
      'every request from Slack is checked against it',
    ),
    channel: s('slack_channel'),
    retryReasonHeader: (s('slack_retry_reason_header') ?? 'x-slack-retry-reason').toLowerCase(),
    retryNumberHeader: (s('slack_retry_number_header') ?? 'x-slack-retry-num').toLowerCase(),
    errorsIgnoreRetry: Array.isArray(ignore) && ignore.length > 0 ? ignore : ['http_timeout'],
    useThreads: booleanSetting(file, SLACK_KEY, settings, 'use_threads', false),
    granularity: granularity as SlackGranularity,
    http: connectorHttpSettings(file, SLACK_KEY, settings, 'https://slack.com/api'),
  };
}

/** The `slack` connector (see `connectors.ts`). */
export const SLACK_CONNECTOR = connectorDefinition({
  key: SLACK_KEY,
  keys: SLACK_KEYS,
  routes: ['webhook'],
  settings: slackSettings,
  create: (settings, input, ingress) => new SlackConnector(settings, input, ingress),
});
