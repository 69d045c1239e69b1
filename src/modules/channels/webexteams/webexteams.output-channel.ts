import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

/**
 * Rasa's WebexTeamsBot: every bot message is `POST /v1/messages` (JSON, the bot's bearer token)
 * to `room` when it is set, else to the room the user wrote in (Rasa posts to the sender's
 * person id as a room id, which Webex refuses). Text is split on blank lines (one message
 * each, `text`), an image is a message with `files: [<url>]`, custom JSON is posted as given
 * (its `roomId` wins). Buttons, quick replies, attachments and elements are Rasa's base
 * fallbacks (see ConnectorOutputChannel): Webex text messages have no buttons.
 */
export class WebexTeamsOutputChannel extends ConnectorOutputChannel {
  readonly name = 'webexteams';

  constructor(
    private readonly client: PlatformClient,
    /** `room`, or the room of the message being answered. */
    private readonly roomId: string,
  ) {
    super();
  }

  private async post(body: Record<string, unknown>): Promise<void> {
    await this.client.call({ path: '/v1/messages', json: body });
  }

  async sendTextMessage(_recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) await this.post({ roomId: this.roomId, text: part });
  }

  override async sendImageUrl(_recipientId: string, image: unknown): Promise<void> {
    await this.post({ roomId: this.roomId, files: [pythonStr(image)] });
  }

  override async sendCustomJson(_recipientId: string, custom: unknown): Promise<void> {
    const message = isJsonObject(custom) ? custom : {};
    await this.post('roomId' in message ? message : { roomId: this.roomId, ...message });
  }
}
