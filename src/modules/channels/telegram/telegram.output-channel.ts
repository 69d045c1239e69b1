import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { ConnectorOutputChannel, textParts } from 'src/modules/channels/connector/connector';
import { type PlatformClient } from 'src/modules/channels/connector/platform-client';

/**
 * The Bot API methods of Rasa's `send_custom_json`, in its order: the first whose parameters are
 * all in the custom JSON is called with them and the JSON's other keys.
 */
const CUSTOM_METHODS: ReadonlyArray<readonly [readonly string[], string]> = [
  [['text'], 'sendMessage'],
  [['photo'], 'sendPhoto'],
  [['audio'], 'sendAudio'],
  [['document'], 'sendDocument'],
  [['sticker'], 'sendSticker'],
  [['video'], 'sendVideo'],
  [['video_note'], 'sendVideoNote'],
  [['animation'], 'sendAnimation'],
  [['voice'], 'sendVoice'],
  [['media'], 'sendMediaGroup'],
  [['latitude', 'longitude', 'title', 'address'], 'sendVenue'],
  [['latitude', 'longitude'], 'sendLocation'],
  [['phone_number', 'first_name'], 'sendContact'],
  [['game_short_name'], 'sendGame'],
  [['action'], 'sendChatAction'],
  [
    ['title', 'description', 'payload', 'provider_token', 'start_parameter', 'currency', 'prices'],
    'sendInvoice',
  ],
];

interface KeyboardButton {
  text: unknown;
  callback_data?: unknown;
}

const button = (b: unknown, inline: boolean): KeyboardButton => {
  const o = isJsonObject(b) ? b : {};
  return inline
    ? { text: o.title ?? null, callback_data: o.payload ?? null }
    : { text: o.title ?? null };
};

/**
 * Rasa's TelegramOutput: Bot API calls (JSON) to the chat. Text is split on blank lines
 * (`sendMessage` each), an image is `sendPhoto`, buttons one `sendMessage` with a keyboard
 * chosen by the response's `button_type`: `inline` (default, one row of inline buttons whose
 * `callback_data` is the payload), `vertical` (one inline button a row) or `reply` (a one-time
 * reply keyboard, one button a row, a nested list of buttons one row of up to three). Custom
 * JSON picks its method by its keys (`chat_id` in it wins). Attachments, quick replies and
 * elements are Rasa's base fallbacks (see ConnectorOutputChannel).
 */
export class TelegramOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[telegram]');
  readonly name = 'telegram';

  constructor(private readonly client: PlatformClient) {
    super();
  }

  private async call(method: string, body: Record<string, unknown>): Promise<void> {
    const answer = await this.client.call({ path: `/${method}`, json: body });
    if (answer.ok && isJsonObject(answer.body) && answer.body.ok === false) {
      TelegramOutputChannel.log.error(
        { method, description: pythonStr(answer.body.description ?? null) },
        'Telegram refused a Bot API call',
      );
    }
  }

  async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of textParts(text)) {
      await this.call('sendMessage', { chat_id: recipientId, text: part });
    }
  }

  override async sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    await this.call('sendPhoto', { chat_id: recipientId, photo: pythonStr(image) });
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const type = typeof this.current.button_type === 'string' ? this.current.button_type : 'inline';
    let replyMarkup: Record<string, unknown>;
    if (type === 'inline') {
      replyMarkup = { inline_keyboard: [buttons.map((b) => button(b, true))] };
    } else if (type === 'vertical') {
      replyMarkup = { inline_keyboard: buttons.map((b) => [button(b, true)]) };
    } else if (type === 'reply') {
      const rows: KeyboardButton[][] = [];
      for (const b of buttons) {
        if (Array.isArray(b)) {
          for (let i = 0; i < b.length; i += 3) {
            rows.push(b.slice(i, i + 3).map((x) => button(x, false)));
          }
        } else {
          rows.push([button(b, false)]);
        }
      }
      replyMarkup = { keyboard: rows, resize_keyboard: false, one_time_keyboard: true };
    } else {
      TelegramOutputChannel.log.error(
        { button_type: type },
        'Trying to send text with buttons for unknown button type',
      );
      return;
    }
    await this.call('sendMessage', { chat_id: recipientId, text, reply_markup: replyMarkup });
  }

  override async sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    const message: Record<string, unknown> = isJsonObject(custom) ? { ...custom } : {};
    const chatId = message.chat_id ?? recipientId;
    delete message.chat_id;
    for (const [params, method] of CUSTOM_METHODS) {
      if (!params.every((p) => message[p] !== undefined && message[p] !== null)) continue;
      const args: Record<string, unknown> = {};
      for (const p of params) {
        args[p] = message[p];
        delete message[p];
      }
      await this.call(method, { chat_id: chatId, ...args, ...message });
    }
  }
}
