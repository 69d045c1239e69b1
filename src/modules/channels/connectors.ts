import { AUDIOCODES_CONNECTOR } from './audiocodes/audiocodes-config';
import { BOTFRAMEWORK_CONNECTOR } from './botframework/botframework-config';
import { type ConnectorDefinition } from './connector/definition';
import { FACEBOOK_CONNECTOR } from './facebook/facebook-config';
import { HANGOUTS_CONNECTOR } from './hangouts/hangouts-config';
import { JAMBONZ_CONNECTOR } from './jambonz/jambonz-config';
import { MATTERMOST_CONNECTOR } from './mattermost/mattermost-config';
import { ROCKETCHAT_CONNECTOR } from './rocketchat/rocketchat-config';
import { SLACK_CONNECTOR } from './slack/slack-config';
import { TELEGRAM_CONNECTOR } from './telegram/telegram-config';
import { TWILIO_CONNECTOR } from './twilio/twilio-config';
import { TWILIO_VOICE_CONNECTOR } from './twilio_voice/twilio-voice-config';
import { WEBEXTEAMS_CONNECTOR } from './webexteams/webexteams-config';

/**
 * The messaging connectors Parley serves, one per Rasa `credentials.yml` key. A new platform
 * adds its folder (`<name>-config.ts` exporting its definition, `<name>-connector.ts`,
 * `<name>.output-channel.ts`) and one line here.
 */
export const CONNECTORS: readonly ConnectorDefinition[] = [
  SLACK_CONNECTOR,
  TELEGRAM_CONNECTOR,
  FACEBOOK_CONNECTOR,
  TWILIO_CONNECTOR,
  TWILIO_VOICE_CONNECTOR,
  BOTFRAMEWORK_CONNECTOR,
  WEBEXTEAMS_CONNECTOR,
  HANGOUTS_CONNECTOR,
  MATTERMOST_CONNECTOR,
  ROCKETCHAT_CONNECTOR,
  AUDIOCODES_CONNECTOR,
  JAMBONZ_CONNECTOR,
];
