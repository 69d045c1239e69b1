import { AUDIOCODES_CONNECTOR } from './audiocodes/audiocodes-config';
import { type ConnectorDefinition } from './connector/definition';
import { FACEBOOK_CONNECTOR } from './facebook/facebook-config';
import { JAMBONZ_CONNECTOR } from './jambonz/jambonz-config';
import { MATTERMOST_CONNECTOR } from './mattermost/mattermost-config';
import { ROCKETCHAT_CONNECTOR } from './rocketchat/rocketchat-config';
import { SLACK_CONNECTOR } from './slack/slack-config';
import { TELEGRAM_CONNECTOR } from './telegram/telegram-config';

/**
 * The messaging connectors Parley serves, one per Rasa `credentials.yml` key. A new platform
 * adds its folder (`<name>-config.ts` exporting its definition, `<name>-connector.ts`,
 * `<name>.output-channel.ts`) and one line here.
 */
export const CONNECTORS: readonly ConnectorDefinition[] = [
  SLACK_CONNECTOR,
  TELEGRAM_CONNECTOR,
  FACEBOOK_CONNECTOR,
  MATTERMOST_CONNECTOR,
  ROCKETCHAT_CONNECTOR,
  AUDIOCODES_CONNECTOR,
  JAMBONZ_CONNECTOR,
];
