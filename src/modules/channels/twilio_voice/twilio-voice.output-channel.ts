import { Logger } from '@nestjs/common';
import { CollectingOutputChannel } from 'src/core';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';

/**
 * Rasa's TwilioVoiceCollectingOutputChannel: the bot's messages of one turn are collected and
 * become the TwiML answer of the webhook (see `voiceResponse`). Text is split on blank lines;
 * buttons (and quick replies, elements) are spoken as the text followed by each button's title;
 * an image is left out with a warning, as Rasa does. Custom JSON is kept (a `{hangup: true}`
 * ends the call); attachments say nothing.
 */
export class TwilioVoiceOutputChannel extends CollectingOutputChannel {
  private static readonly log = new Logger('Connector[twilio_voice]');

  constructor() {
    super('twilio_voice');
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    await this.send(recipientId, { text });
    for (const button of buttons) {
      const title = isJsonObject(button) ? button.title : undefined;
      await this.send(recipientId, { text: title === undefined ? null : pythonStr(title) });
    }
  }

  override sendImageUrl(): Promise<void> {
    TwilioVoiceOutputChannel.log.warn(
      'An image was removed from the voice message and only the text of message was sent. ' +
        'Define voice-friendly alternatives for responses with visual elements.',
    );
    return Promise.resolve();
  }
}
