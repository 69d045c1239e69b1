import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pythonStr } from 'src/core/actions/nlg';
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
import { type MattermostSettings } from './mattermost-config';
import { actionSignature, MattermostOutputChannel } from './mattermost.output-channel';

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * Rasa's MattermostInput at `/webhooks/mattermost/webhook`, for an outgoing webhook (JSON or
 * form-encoded, as Mattermost's "content type" setting says) and the clicks of the message
 * buttons the bot posts:
 *
 * - A request with `trigger_word` is a user message: its `token` must be the outgoing
 *   webhook's (`webhook_token`, compared in constant time), else a 401 failure body and no
 *   turn. The text is the post without its first word (the trigger word or @mention), or the
 *   whole post when it is one word, as Rasa splits it; the sender is `user_id`, answers go to
 *   `channel_id`. Answered `success`; a redelivered post (same `post_id`) replays that answer.
 * - A request with `context` (no `trigger_word`) is a button click: `context.action` (the
 *   button's payload) is the user's text. Mattermost sends no token with it, so the context
 *   must carry the `parley_signature` the button was posted with (bound to the channel and
 *   the action), else 401. Answered `{}` (Mattermost reads the answer to a click as JSON).
 * - Anything else, once its token is checked, is answered `success` without a turn.
 *
 * No metadata (Rasa sends none).
 */
export class MattermostConnector implements Connector {
  readonly name = 'mattermost';
  private readonly client: PlatformClient;

  constructor(
    private readonly settings: MattermostSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: this.name,
      ...settings.http,
      headers: { authorization: `Bearer ${settings.token}` },
    });
  }

  /** Without `webhook_url` the buttons posted have no URL to send their clicks to. */
  start(): Promise<void> {
    if (this.settings.webhookUrl === null) {
      new Logger('Connector[mattermost]').warn(
        'mattermost.webhook_url is not set: clicks on the buttons the bot posts cannot reach it',
      );
    }
    return Promise.resolve();
  }

  /** Rasa's MattermostInput has no output channel of its own (it needs the user's channel). */
  outputChannel(): null {
    return null;
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route !== 'webhook' || req.method !== 'POST') return false;
    const body = this.body(req);
    if ('trigger_word' in body) {
      this.verifyToken(body);
      const text = str(body.text) ?? '';
      const space = text.indexOf(' ');
      const message = space < 0 ? text : text.slice(space + 1);
      await this.turn(req, res, body, message, str(body.post_id), () =>
        res.status(200).type('text/plain').send('success'),
      );
    } else if ('context' in body) {
      const context = isJsonObject(body.context) ? body.context : {};
      const channel = str(body.channel_id) ?? '';
      const signature = str(context.parley_signature);
      const expected = actionSignature(this.signingKey(), channel, context.action ?? null);
      if (signature === null || !safeEqual(signature, expected)) {
        throw badSignature(this.name, 'The button click does not carry a valid parley_signature');
      }
      await this.turn(req, res, body, pythonStr(context.action ?? null), null, () =>
        res.status(200).json({}),
      );
    } else {
      this.verifyToken(body);
      res.status(200).type('text/plain').send('success');
    }
    return true;
  }

  /** The JSON or form-encoded body Mattermost sends (its outgoing webhook "content type"). */
  private body(req: Request): Record<string, unknown> {
    const raw = rawBody(req);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type === 'application/x-www-form-urlencoded') {
      return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
    }
    return parseJsonBody(this.name, raw);
  }

  /**
   * The key the buttons' `parley_signature` is made with: the outgoing webhook's token, else
   * the bot's own token (a secret too): button clicks carry no Mattermost token to check.
   */
  private signingKey(): string {
    return this.settings.webhookToken ?? this.settings.token;
  }

  private verifyToken(body: Record<string, unknown>): void {
    if (this.settings.webhookToken === null) return;
    const token = str(body.token);
    if (token === null || !safeEqual(token, this.settings.webhookToken)) {
      throw badSignature(this.name, 'The request does not carry the outgoing webhook token');
    }
  }

  private async turn(
    req: Request,
    res: Response,
    body: Record<string, unknown>,
    text: string,
    postId: string | null,
    answer: () => void,
  ): Promise<void> {
    const sender = str(body.user_id);
    const channel = str(body.channel_id);
    if (sender === null || sender === '' || channel === null || channel === '') {
      throw badBody(this.name, 'The request must carry user_id and channel_id strings.');
    }
    await once(this.ingress, req, res, { scope: this.name, sender }, postId, async () => {
      await this.input.handleMessage({
        text,
        senderId: sender,
        inputChannel: this.name,
        output: new MattermostOutputChannel(
          this.client,
          channel,
          this.settings.webhookUrl,
          this.signingKey(),
        ),
        metadata: null,
      });
      answer();
    });
  }
}
