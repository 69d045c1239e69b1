import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

/**
 * Rasa's MessengerBot: every part is one Send API call (`POST /me/messages?access_token=…`,
 * `{messaging_type: RESPONSE, recipient: {id}, message, notification_type: REGULAR}`). Text is
 * split on blank lines; an image is an image attachment; buttons (at most 3, else the text
 * alone) a button template whose buttons default to `type: postback`; quick replies are
 * `quick_replies` (`content_type` text by default); elements a generic template; custom JSON is
 * the message as given (its `sender.id` wins as recipient). Attachments are Rasa's base fallback.
 */
export class FacebookOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[facebook]');
  readonly name = 'facebook';

  constructor(
    private readonly client: PlatformClient,
    private readonly accessToken: string,
  ) {
    super();
  }

  private async call(body: Record<string, unknown>): Promise<void> {
    await this.client.call({
      path: '/me/messages',
      query: { access_token: this.accessToken },
      json: body,
    });
  }

  private message(recipientId: string, message: unknown): Promise<void> {
    return this.call({
      messaging_type: 'RESPONSE',
      recipient: { id: recipientId },
      message,
      notification_type: 'REGULAR',
    });
  }

  /** `mark_seen`, `typing_on`, `typing_off`. */
  sendAction(recipientId: string, action: string): Promise<void> {
    return this.call({ recipient: { id: recipientId }, sender_action: action });
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) await this.message(recipientId, { text: part });
  }

  override sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    return this.message(recipientId, {
      attachment: { type: 'image', payload: { url: pythonStr(image) } },
    });
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    if (buttons.length > 3) {
      FacebookOutputChannel.log.warn(
        { buttons: buttons.length },
        'Facebook API currently allows only up to 3 buttons; sending the text alone',
      );
      await this.sendTextMessage(recipientId, text ?? 'None');
      return;
    }
    await this.message(recipientId, {
      attachment: {
        type: 'template',
        payload: { template_type: 'button', text, buttons: buttons.map(postback) },
      },
    });
  }

  override async sendQuickReplies(
    recipientId: string,
    text: string | null,
    quickReplies: readonly unknown[],
  ): Promise<void> {
    const replies = quickReplies.map((q) => {
      const o = isJsonObject(q) ? q : {};
      return {
        content_type: typeof o.content_type === 'string' ? o.content_type : 'text',
        title: o.title ?? null,
        payload: o.payload ?? null,
      };
    });
    await this.message(recipientId, { text, quick_replies: replies });
  }

  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    const withPostbacks = elements.map((element) => {
      if (!isJsonObject(element) || !Array.isArray(element.buttons)) return element;
      return { ...element, buttons: element.buttons.map(postback) };
    });
    await this.message(recipientId, {
      attachment: {
        type: 'template',
        payload: { template_type: 'generic', elements: withPostbacks },
      },
    });
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    const message: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    const sender = isJsonObject(message.sender) ? message.sender : {};
    delete message.sender;
    const id = sender.id;
    await this.message(typeof id === 'string' && id !== '' ? id : recipientId, message);
  }
}

/** A Rasa button as a Messenger button: `type: postback` unless it names its type. */
function postback(button: unknown): unknown {
  if (!isJsonObject(button) || 'type' in button) return button;
  return { ...button, type: 'postback' };
}
