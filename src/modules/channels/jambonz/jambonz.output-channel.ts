import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { type JsonObject } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel } from 'src/modules/channels/connector/connector';
import { conciseButtons, removeEmojis } from 'src/modules/channels/connector/voice-text';

/** Seconds between the last words and the hangup (Rasa's DEFAULT_HANGUP_DELAY_SECONDS). */
const HANGUP_DELAY_SECONDS = 1;

/** The verb that listens for the caller's next utterance or keypresses (Rasa's gather). */
export function gatherVerb(): JsonObject {
  return {
    verb: 'gather',
    input: ['speech', 'digits'],
    minDigits: 1,
    id: randomUUID().replace(/-/g, ''),
    actionHook: '/gather',
  };
}

/**
 * Rasa Pro's JambonzWebsocketOutput, as jambonz verbs collected for the `ack` that answers the
 * message which started the turn: each text is a `say` verb (emoji removed; buttons said as one
 * concise text), custom JSON is said by its `text`, and Parley's `action_hangup` message
 * (`custom: {hangup: true}`) ends the call after the words (`pause` 1 s, `hangup`). Images and
 * attachments cannot be said: left out with a warning (Rasa raises).
 */
export class JambonzOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[jambonz]');
  readonly name = 'jambonz';
  private readonly says: JsonObject[] = [];
  private hangupRequested = false;

  /** The verbs to run next: the words, then listening again, or the hangup. */
  verbs(): JsonObject[] {
    if (this.hangupRequested) {
      return [...this.says, { verb: 'pause', length: HANGUP_DELAY_SECONDS }, { verb: 'hangup' }];
    }
    return [...this.says, gatherVerb()];
  }

  say(text: string): void {
    this.says.push({ verb: 'say', text, id: randomUUID().replace(/-/g, '') });
  }

  sendTextMessage(_recipientId: string, text: string): Promise<void> {
    this.say(removeEmojis(text));
    return Promise.resolve();
  }

  override sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    return this.sendTextMessage(recipientId, conciseButtons(text, buttons));
  }

  override sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    if (isJsonObject(custom) && custom.hangup === true) return this.hangup();
    if (isJsonObject(custom) && typeof custom.text === 'string' && custom.text !== '') {
      return this.sendTextMessage(recipientId, custom.text);
    }
    JambonzOutputChannel.log.warn('Custom JSON without "text" cannot be said; left out');
    return Promise.resolve();
  }

  hangup(_recipientId?: string): Promise<void> {
    this.hangupRequested = true;
    return Promise.resolve();
  }

  override sendImageUrl(): Promise<void> {
    JambonzOutputChannel.log.warn('Images are not supported by this channel; left out');
    return Promise.resolve();
  }

  override sendAttachment(): Promise<void> {
    JambonzOutputChannel.log.warn('Attachments are not supported by this channel; left out');
    return Promise.resolve();
  }
}
