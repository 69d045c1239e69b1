import { type OutputChannel } from 'src/core/channels/output-channel';
import { type JsonObject } from 'src/core/events/event-base';

/** Rasa's default sender id when a channel gives none. */
export const DEFAULT_SENDER_ID = 'default';

/**
 * One message from a user, as a channel hands it to the dialogue engine (Rasa's `UserMessage`).
 * `text` may be an NLU shortcut such as `/greet{"name": "Ann"}`; `parseData`, when given, is used
 * instead of running NLU (REST `POST .../messages` with `parse_data`).
 */
export interface UserMessage {
  readonly text: string | null;
  readonly senderId: string;
  /** Name of the channel the message came in on (`rest`, `socketio`, `genesys`, ...). */
  readonly inputChannel: string | null;
  /** Where the bot's answers go. */
  readonly output: OutputChannel;
  readonly messageId?: string | null;
  readonly metadata?: JsonObject | null;
  readonly parseData?: JsonObject | null;
}
