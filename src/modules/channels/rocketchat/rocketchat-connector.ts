import type { Request, Response } from 'express';
import { isJsonObject } from 'src/core/events/json-values';
import {
  badBody,
  badSignature,
  type Connector,
  type ConnectorRoute,
  once,
  parseJsonBody,
  rawBody,
} from 'src/modules/channels/connector/connector';
import { PlatformClient } from 'src/modules/channels/connector/platform-client';
import { safeEqual } from 'src/modules/channels/connector/signature';
import { type ChannelInput } from 'src/modules/channels/input/channel-input';
import { type IdempotentIngress } from 'src/modules/idempotency';
import { type RocketChatSettings } from './rocketchat-config';
import { RocketChatOutputChannel, RocketChatSession } from './rocketchat.output-channel';

/** The header of Rocket.Chat's livechat webhook that carries its secret token. */
const LIVECHAT_TOKEN_HEADER = 'x-rocketchat-livechat-token';

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * Rasa's RocketChatInput at `/webhooks/rocketchat/webhook`, for an outgoing integration
 * ("Outgoing WebHook", JSON) or the livechat webhook. Every request must carry Parley's
 * `webhook_token` (the integration's `token` in the body, or the livechat webhook's
 * `X-RocketChat-Livechat-Token` header; constant time), else a 401 failure body and no turn.
 * Then, as Rasa:
 *
 * - an integration message: the text is `text`, the sender (and the room answers go to) is
 *   `channel_id`, the author `user_name`;
 * - a livechat message (`visitor` present): the first of `messages` (`msg`, `username`), the
 *   room `_id`;
 * - a message by the bot user itself (`user` setting) is not a user message; answered `""`.
 *
 * A redelivered message (same `message_id`, or livechat message `_id`) replays the first
 * answer. No metadata (Rasa sends none).
 */
export class RocketChatConnector implements Connector {
  readonly name = 'rocketchat';
  private readonly session: RocketChatSession;

  constructor(
    private readonly settings: RocketChatSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    const client = new PlatformClient({
      name: this.name,
      ...settings.http,
    });
    this.session = new RocketChatSession(client, settings.user, settings.password);
  }

  /** The bot user logs in at start, so the first answer does not wait for it. */
  async start(): Promise<void> {
    await this.session.login();
  }

  /** Rasa's get_output_channel(): posts to the recipient id as a room id. */
  outputChannel(): RocketChatOutputChannel {
    return new RocketChatOutputChannel(this.session);
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const raw = rawBody(req);
    const header = req.headers[LIVECHAT_TOKEN_HEADER];
    // The livechat header is checked before the body is parsed; the integration's token is in it.
    const token = this.settings.webhookToken;
    const body =
      token === null || (typeof header === 'string' && safeEqual(header, token))
        ? parseJsonBody(this.name, raw)
        : this.verified(token, parseJsonBody(this.name, raw));
    let text: string | null;
    let author: string | null;
    let room: unknown;
    let messageId: string | null;
    if (!('visitor' in body)) {
      text = str(body.text);
      author = str(body.user_name);
      room = body.channel_id;
      messageId = str(body.message_id);
    } else {
      const first =
        Array.isArray(body.messages) && isJsonObject(body.messages[0]) ? body.messages[0] : {};
      text = str(first.msg);
      author = str(first.username);
      room = body._id;
      messageId = str(first._id);
    }
    if (author === this.settings.user || text === null) {
      res.status(200).type('text/plain').send('');
      return true;
    }
    if (typeof room !== 'string' || room === '') {
      throw badBody(this.name, 'The message must name its room (channel_id, or _id for livechat).');
    }
    await once(this.ingress, req, res, { scope: this.name, sender: room }, messageId, async () => {
      await this.input.handleMessage({
        text,
        senderId: room,
        inputChannel: this.name,
        output: new RocketChatOutputChannel(this.session),
        metadata: null,
      });
      res.status(200).type('text/plain').send('');
    });
    return true;
  }

  private verified(expected: string, body: Record<string, unknown>): Record<string, unknown> {
    const token = str(body.token);
    if (token === null || !safeEqual(token, expected)) {
      throw badSignature(this.name, 'The request does not carry the integration token');
    }
    return body;
  }
}
