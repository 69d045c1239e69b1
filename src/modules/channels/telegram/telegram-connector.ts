import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isJsonObject } from 'src/core/events/json-values';
import {
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
import { type TelegramSettings } from './telegram-config';
import { TelegramOutputChannel } from './telegram.output-channel';

const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

const obj = (value: unknown): Record<string, unknown> => (isJsonObject(value) ? value : {});

/**
 * Rasa's TelegramInput at `/webhooks/telegram/webhook`, plus `/webhooks/telegram/set_webhook`
 * (GET or POST: calls setWebhook with `webhook_url`, as at start). With `secret_token` (Parley's
 * setting, given to setWebhook) every update must carry it in `X-Telegram-Bot-Api-Secret-Token`
 * (compared in constant time), else a 401 failure body before the body is parsed. As Rasa, an
 * update is handled only when the bot's getMe username is `verify` (asked once, then
 * remembered; else the answer is `failed`), and:
 *
 * - `callback_query` (an inline button): its `data` is the text, the chat of its message the
 *   sender; `edited_message`: its text; `message`: its text with `/bot` taken out, or a location
 *   as `{"lng":<longitude>, "lat":<latitude>}`; other updates are answered `success` unhandled.
 * - The sender is the chat id; `/restart` is followed by a second message `/start`.
 * - Answers `success`. The user event has no metadata (Rasa's Telegram sends none). A
 *   redelivered update (same `update_id`) replays the first answer (see `once`).
 */
export class TelegramConnector implements Connector {
  private static readonly log = new Logger('Connector[telegram]');
  readonly name = 'telegram';
  private readonly client: PlatformClient;
  private username: string | null = null;

  constructor(
    private readonly settings: TelegramSettings,
    private readonly input: ChannelInput,
    private readonly ingress: IdempotentIngress | null = null,
  ) {
    this.client = new PlatformClient({
      name: 'telegram',
      ...settings.http,
      // The token is part of the path of every call (never logged: only the method is).
      baseUrl: `${settings.http.baseUrl}/bot${settings.accessToken}`,
      retryAfterOf: (body) => {
        const seconds = obj(obj(body).parameters).retry_after;
        return typeof seconds === 'number' ? seconds : null;
      },
    });
  }

  outputChannel(): TelegramOutputChannel {
    return new TelegramOutputChannel(this.client);
  }

  /** As Rasa when it builds the output channel: tells Telegram the webhook URL. */
  async start(): Promise<void> {
    if (this.settings.webhookUrl !== null) await this.setWebhook();
  }

  async handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean> {
    if (route === 'set_webhook' && (req.method === 'GET' || req.method === 'POST')) {
      const ok = this.settings.webhookUrl !== null && (await this.setWebhook());
      res
        .status(200)
        .type('text/plain')
        .send(ok ? 'Webhook setup successful' : 'Invalid webhook');
      return true;
    }
    if (route !== 'webhook' || req.method !== 'POST') return false;
    if (this.settings.secretToken !== null) {
      const given = req.headers[SECRET_HEADER];
      if (typeof given !== 'string' || !safeEqual(given, this.settings.secretToken)) {
        throw badSignature(
          this.name,
          'The update does not carry the secret token in X-Telegram-Bot-Api-Secret-Token',
        );
      }
    }
    const update = parseJsonBody(this.name, rawBody(req));
    if ((await this.botUsername()) !== this.settings.verify) {
      TelegramConnector.log.warn(
        { verify: this.settings.verify },
        'Invalid access token, check it matches Telegram (getMe does not answer "verify")',
      );
      res.status(200).type('text/plain').send('failed');
      return true;
    }
    const read = readUpdate(update);
    if (read === null) {
      res.status(200).type('text/plain').send('success');
      return true;
    }
    const output = this.outputChannel();
    const texts = read.text === '/restart' ? ['/restart', '/start'] : [read.text];
    const updateId = typeof update.update_id === 'number' ? String(update.update_id) : null;
    const scope = { scope: this.name, sender: read.chatId };
    await once(this.ingress, req, res, scope, updateId, async () => {
      for (const text of texts) {
        await this.input.handleMessage({
          text,
          senderId: read.chatId,
          inputChannel: this.name,
          output,
          metadata: null,
        });
      }
      res.status(200).type('text/plain').send('success');
    });
    return true;
  }

  private async setWebhook(): Promise<boolean> {
    const body: Record<string, unknown> = { url: this.settings.webhookUrl };
    if (this.settings.secretToken !== null) body.secret_token = this.settings.secretToken;
    const answer = await this.client.call({ path: '/setWebhook', json: body });
    const ok = answer.ok && obj(answer.body).ok === true;
    if (ok) TelegramConnector.log.log('Webhook Setup Successful');
    else TelegramConnector.log.warn({ status: answer.status }, 'Webhook Setup Failed');
    return ok;
  }

  /** The bot's username from getMe, remembered once known. */
  private async botUsername(): Promise<string | null> {
    if (this.username !== null) return this.username;
    const answer = await this.client.call({ path: '/getMe', json: {} });
    const username = obj(obj(answer.body).result).username;
    if (answer.ok && typeof username === 'string') this.username = username;
    return this.username;
  }
}

/** The text and chat of an update as Rasa reads them; null when it is none it handles. */
export function readUpdate(
  update: Record<string, unknown>,
): { text: string; chatId: string } | null {
  let message: Record<string, unknown>;
  let text: unknown;
  if (isJsonObject(update.callback_query)) {
    message = obj(update.callback_query.message);
    text = update.callback_query.data;
  } else if (isJsonObject(update.edited_message)) {
    message = obj(update.edited_message);
    text = message.text;
  } else {
    message = obj(update.message);
    const location = obj(message.location);
    if (typeof message.text === 'string' && message.text !== '') {
      text = message.text.replace(/\/bot/g, '');
    } else if (isJsonObject(message.location)) {
      text = `{"lng":${String(location.longitude)}, "lat":${String(location.latitude)}}`;
    } else {
      return null;
    }
  }
  const chatId = obj(message.chat).id;
  if (typeof text !== 'string' || (typeof chatId !== 'number' && typeof chatId !== 'string')) {
    return null;
  }
  return { text, chatId: String(chatId) };
}
