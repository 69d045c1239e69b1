import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

/**
 * Rasa's SlackBot: every bot message is one `chat.postMessage` call (JSON, bearer token) to
 * `slack_channel` or the channel the user wrote in, in the thread when `use_threads` is on.
 * Text is split on blank lines (`as_user`, `type: mrkdwn`), buttons become a section block and
 * an actions block (at most 5, else the text alone), an image an image block, an attachment
 * `attachments: [it]`, custom JSON is posted as given (its `channel` wins). Quick replies and
 * elements are Rasa's base fallbacks (see ConnectorOutputChannel).
 */
export class SlackOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[slack]');
  readonly name = 'slack';

  constructor(
    private readonly client: PlatformClient,
    private readonly channel: string | null,
    private readonly threadId: string | null,
  ) {
    super();
  }

  private async post(channel: string, fields: Record<string, unknown>): Promise<void> {
    const body: Record<string, unknown> = { channel, ...fields };
    if (this.threadId !== null && this.threadId !== '') body.thread_ts = this.threadId;
    const answer = await this.client.call({ path: '/chat.postMessage', json: body });
    if (answer.ok && isJsonObject(answer.body) && answer.body.ok === false) {
      SlackOutputChannel.log.error(
        { error: pythonStr(answer.body.error ?? null) },
        'Slack refused chat.postMessage',
      );
    }
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    const recipient = this.channel ?? recipientId;
    for (const part of textParts(text)) {
      await this.post(recipient, { as_user: true, text: part, type: 'mrkdwn' });
    }
  }

  override async sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    const url = pythonStr(image);
    await this.post(this.channel ?? recipientId, {
      as_user: true,
      text: url,
      blocks: [{ type: 'image', image_url: url, alt_text: url }],
    });
  }

  override async sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    await this.post(this.channel ?? recipientId, {
      as_user: true,
      attachments: [attachment],
    });
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const recipient = this.channel ?? recipientId;
    if (buttons.length > 5) {
      SlackOutputChannel.log.warn(
        { buttons: buttons.length },
        'Slack API currently allows only up to 5 buttons; sending the text alone',
      );
      await this.sendTextMessage(recipient, text ?? 'None');
      return;
    }
    const elements = buttons.map((button) => {
      const b = isJsonObject(button) ? button : {};
      return {
        type: 'button',
        text: { type: 'plain_text', text: b.title ?? null },
        value: b.payload ?? null,
      };
    });
    await this.post(recipient, {
      as_user: true,
      text,
      blocks: [
        { type: 'section', text: { type: 'plain_text', text } },
        { type: 'actions', elements },
      ],
    });
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    const message: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    const channel =
      typeof message.channel === 'string' ? message.channel : (this.channel ?? recipientId);
    delete message.channel;
    if (!('as_user' in message)) message.as_user = true;
    await this.post(channel, message);
  }
}
