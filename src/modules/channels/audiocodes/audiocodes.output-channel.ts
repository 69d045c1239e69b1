import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { type JsonObject } from 'src/core';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel } from 'src/modules/channels/connector/connector';

/** Emoji (pictographs, their modifiers, joiners and variation selectors) a voice cannot say. */
const EMOJI =
  /\p{Extended_Pictographic}|\p{Emoji_Modifier}|[\u{1F1E6}-\u{1F1FF}]|\u200d|\ufe0f|\u20e3/gu;

/** Rasa's remove_emojis: the text without emoji. */
export function removeEmojis(text: string): string {
  return text.replace(EMOJI, '');
}

/**
 * Rasa's `send_text_with_buttons_concise` for voice: the text, ended with a full stop unless it
 * ends in `.`, `!`, `?` or `:`, then the buttons' titles joined by `, `
 * (`Hi there! How is your day going? good, not so good`).
 */
export function conciseButtons(text: string | null, buttons: readonly unknown[]): string {
  let out = text ?? '';
  const last = out.trim().slice(-1);
  if (out.trim() !== '' && !['.', '!', '?', ':'].includes(last)) out += '.';
  if (out !== '') out += ' ';
  return out + buttons.map((b) => pythonStr(isJsonObject(b) ? (b.title ?? '') : '')).join(', ');
}

/**
 * Rasa Pro's AudiocodesOutput: collects the bot's messages of one request as Bot API
 * activities, answered in the HTTP response (`{conversation, activities}`). Each activity gets
 * an `id` (a UUID) and a `timestamp` (ISO, milliseconds, `Z`). Text is a `message` activity
 * (emoji removed), buttons are said as one concise text, custom JSON is an activity as given,
 * and Parley's `action_hangup` message (`custom: {hangup: true}`) is the `hangup` event.
 * Images and attachments cannot be said: they are left out with a warning (Rasa raises, which
 * ends the call with an error).
 */
export class AudiocodesOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[audiocodes]');
  readonly name = 'audiocodes';
  readonly activities: JsonObject[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {
    super();
  }

  /** Adds one activity with its id and timestamp. */
  add(activity: JsonObject): Promise<void> {
    this.activities.push({ ...activity, timestamp: this.now().toISOString(), id: randomUUID() });
    return Promise.resolve();
  }

  sendTextMessage(_recipientId: string, text: string): Promise<void> {
    return this.add({ type: 'message', text: removeEmojis(text) });
  }

  override sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    return this.sendTextMessage(recipientId, conciseButtons(text, buttons));
  }

  override sendCustomJson(_recipientId: string, custom: unknown): Promise<void> {
    if (isJsonObject(custom) && custom.hangup === true) {
      return this.add({ type: 'event', name: 'hangup' });
    }
    return this.add(isJsonObject(custom) ? custom : { type: 'message', text: pythonStr(custom) });
  }

  hangup(_recipientId?: string): Promise<void> {
    return this.add({ type: 'event', name: 'hangup' });
  }

  override sendImageUrl(): Promise<void> {
    AudiocodesOutputChannel.log.warn('Images are not supported by this channel; left out');
    return Promise.resolve();
  }

  override sendAttachment(): Promise<void> {
    AudiocodesOutputChannel.log.warn('Attachments are not supported by this channel; left out');
    return Promise.resolve();
  }
}
