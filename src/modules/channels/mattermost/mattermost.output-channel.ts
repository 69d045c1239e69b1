import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';
import { hmacHex } from 'src/modules/channels/connector/signature';

/**
 * The proof a message button carries in its `context` (`parley_signature`): Mattermost sends
 * button clicks to the webhook without the outgoing webhook's token, so the click's context
 * must show that Parley made the button, for this channel and this action. An HMAC of both
 * with the outgoing webhook's token.
 */
export function actionSignature(webhookToken: string, channelId: string, action: unknown): string {
  return hmacHex(webhookToken, `mattermost-action\n${channelId}\n${JSON.stringify(action)}`);
}

/**
 * Rasa's MattermostBot: every bot message is one `POST <url>/posts` (REST API v4, JSON,
 * `Authorization: Bearer <token>`) to the channel the user wrote in. Text is split on blank
 * lines (`{channel_id, message}`), an image is a message attachment with `image_url`, buttons
 * are an interactive message attachment whose actions call `webhook_url` back with
 * `context.action` = the payload (and Parley's `parley_signature`), custom JSON is posted as
 * given (`channel_id` and `message` defaulted). Quick replies, elements and attachments are
 * Rasa's base fallbacks (see ConnectorOutputChannel).
 */
export class MattermostOutputChannel extends ConnectorOutputChannel {
  readonly name = 'mattermost';

  constructor(
    private readonly client: PlatformClient,
    private readonly channelId: string,
    private readonly webhookUrl: string | null,
    private readonly webhookToken: string,
  ) {
    super();
  }

  private async post(body: Record<string, unknown>): Promise<void> {
    await this.client.call({ path: '/posts', json: body });
  }

  async sendTextMessage(_recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) {
      await this.post({ channel_id: this.channelId, message: part });
    }
  }

  override async sendImageUrl(_recipientId: string, image: unknown): Promise<void> {
    await this.post({
      channel_id: this.channelId,
      props: { attachments: [{ image_url: image }] },
    });
  }

  override async sendTextWithButtons(
    _recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const actions = buttons.map((button) => {
      const b = isJsonObject(button) ? button : {};
      const action = b.payload ?? null;
      return {
        name: b.title ?? null,
        integration: {
          url: this.webhookUrl,
          context: {
            action,
            parley_signature: actionSignature(this.webhookToken, this.channelId, action),
          },
        },
      };
    });
    await this.post({
      channel_id: this.channelId,
      message: text,
      props: { attachments: [{ actions }] },
    });
  }

  override async sendCustomJson(_recipientId: string, custom: unknown): Promise<void> {
    const body: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    if (!('channel_id' in body)) body.channel_id = this.channelId;
    if (!('message' in body)) body.message = '';
    await this.post(body);
  }
}
