import { Logger } from '@nestjs/common';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import {
  type PlatformAnswer,
  type PlatformClient,
} from 'src/modules/channels/connector/platform-client';

/**
 * The bot user's REST session (`POST /api/v1/login` with `user` and `password`, then the
 * `X-Auth-Token` and `X-User-Id` headers on every call). Logged in once, not per message as
 * Rasa's client does, and again when Rocket.Chat answers 401 (the token expired or was revoked).
 */
export class RocketChatSession {
  private static readonly log = new Logger('Connector[rocketchat]');
  private headers: Record<string, string> | null = null;
  private pending: Promise<Record<string, unknown> | null> | null = null;

  constructor(
    private readonly client: PlatformClient,
    private readonly user: string,
    private readonly password: string,
  ) {}

  /** Logs in (one login at a time); false when Rocket.Chat refused or did not answer. */
  async login(): Promise<boolean> {
    this.pending ??= this.client
      .call({ path: '/api/v1/login', json: { user: this.user, password: this.password } })
      .then((answer) => (isJsonObject(answer.body) ? answer.body : null))
      .finally(() => (this.pending = null));
    const body = await this.pending;
    const data = isJsonObject(body?.data) ? body.data : {};
    if (
      body?.status !== 'success' ||
      typeof data.authToken !== 'string' ||
      typeof data.userId !== 'string'
    ) {
      RocketChatSession.log.error({ user: this.user }, 'Rocket.Chat refused the bot user login');
      this.headers = null;
      return false;
    }
    this.headers = { 'x-auth-token': data.authToken, 'x-user-id': data.userId };
    return true;
  }

  /** Calls a REST method as the bot user; logs in first, and once more on a 401. */
  async post(method: string, json: Record<string, unknown>): Promise<PlatformAnswer | null> {
    if (this.headers === null && !(await this.login())) return null;
    const call = () =>
      this.client.call({ path: `/api/v1/${method}`, json, headers: this.headers ?? {} });
    const answer = await call();
    if (answer.status !== 401 || !(await this.login())) return answer;
    return call();
  }
}

/**
 * Rasa's RocketChatBot: every bot message is one `chat.postMessage` (REST, as the bot user) to
 * the room the user wrote in (`roomId`). Text is split on blank lines, an image is an
 * attachment `{image_url, collapsed: false}`, buttons are an attachment whose `actions` are
 * `{type: button, text, msg, msg_in_chat_window: true}` (Rocket.Chat ≥ 0.69), an attachment is
 * posted as one, elements as the attachments, custom JSON as the post (its `channel` wins over
 * `room_id`). Quick replies are buttons (Rasa's base behaviour).
 */
export class RocketChatOutputChannel extends ConnectorOutputChannel {
  readonly name = 'rocketchat';

  constructor(private readonly session: RocketChatSession) {
    super();
  }

  private async post(roomId: string, text: string | null, fields: Record<string, unknown> = {}) {
    await this.session.post('chat.postMessage', {
      roomId,
      ...(text === null || text === '' ? {} : { text }),
      ...fields,
    });
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) await this.post(recipientId, part);
  }

  override async sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    await this.post(recipientId, null, {
      attachments: [{ image_url: image, collapsed: false }],
    });
  }

  override async sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    await this.post(recipientId, null, { attachments: [attachment] });
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const actions = buttons.map((button) => {
      const b = isJsonObject(button) ? button : {};
      return {
        text: b.title ?? null,
        msg: b.payload ?? null,
        type: 'button',
        msg_in_chat_window: true,
      };
    });
    await this.post(recipientId, text, { attachments: [{ actions }] });
  }

  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    await this.post(recipientId, null, { attachments: elements });
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    const fields: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    const text = typeof fields.text === 'string' ? fields.text : null;
    delete fields.text;
    const roomId = fields.room_id;
    delete fields.room_id;
    if (typeof fields.channel === 'string' && fields.channel !== '') {
      // Rocket.Chat takes one of `channel` and `roomId`; Rasa keeps `channel`.
      await this.session.post('chat.postMessage', {
        ...(text === null || text === '' ? {} : { text }),
        ...fields,
      });
      return;
    }
    await this.post(
      typeof roomId === 'string' && roomId !== '' ? roomId : recipientId,
      text,
      fields,
    );
  }
}
