import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { type JsonObject } from 'src/core';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel } from 'src/modules/channels/connector/connector';
import { conciseButtons, removeEmojis } from 'src/modules/channels/connector/voice-text';

/**
 * Rasa Pro's AudiocodesOutput: collects the bot's messages of one request as Bot API
 * activities, answered in the HTTP response (`{conversation, activities}`), or, in the
 * WebSocket flavour, sends each at once. Each activity gets
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

  /**
   * `deliver`, when given, sends each activity at once (the WebSocket flavour: Rasa's
   * WebsocketOutput) instead of collecting it for the HTTP answer.
   */
  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly deliver: ((activity: JsonObject) => void) | null = null,
  ) {
    super();
  }

  /** Adds one activity with its id and timestamp. */
  add(activity: JsonObject): Promise<void> {
    const stamped = { ...activity, timestamp: this.now().toISOString(), id: randomUUID() };
    if (this.deliver !== null) this.deliver(stamped);
    else this.activities.push(stamped);
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
