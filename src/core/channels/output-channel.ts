import { type JsonObject } from 'src/core/events/event-base';

/**
 * A bot message as actions produce it and channels send it — the keys of Rasa's
 * `send_response` dict: `text`, `image`, `buttons`, `quick_replies`, `attachment`, `elements`,
 * `custom`, plus any extra keys a response defines.
 */
export type BotMessage = JsonObject;

/**
 * Port: where the bot's answers for one incoming message go (Rasa's `OutputChannel`). A channel
 * implements `send`; `sendResponse` dispatches a bot message the way Rasa does.
 */
export abstract class OutputChannel {
  /** Channel name, e.g. `rest`, `callback`, `socketio`, `collector`. */
  abstract readonly name: string;

  /** Delivers one bot message to `recipientId`. */
  abstract send(recipientId: string, message: BotMessage): Promise<void>;

  /**
   * Rasa's `OutputChannel.send_response`: text is split on blank lines into several messages
   * (the last one carrying buttons / quick replies), then image, attachment, elements and custom
   * payloads each go as their own message.
   */
  async sendResponse(recipientId: string, message: BotMessage): Promise<void> {
    const text = typeof message.text === 'string' ? message.text : null;
    const quickReplies = message.quick_replies ?? null;
    const buttons = message.buttons ?? null;
    if (text !== null) {
      const parts = text.split('\n\n').filter((part) => part.length > 0);
      const last = parts.pop();
      for (const part of parts) await this.send(recipientId, { text: part });
      if (last !== undefined) {
        if (quickReplies) await this.send(recipientId, { text: last, quick_replies: quickReplies });
        else if (buttons) await this.send(recipientId, { text: last, buttons });
        else await this.send(recipientId, { text: last });
      }
    }
    if (message.custom !== undefined && message.custom !== null) {
      await this.send(recipientId, { custom: message.custom });
    }
    if (typeof message.image === 'string') await this.send(recipientId, { image: message.image });
    if (message.attachment !== undefined && message.attachment !== null) {
      await this.send(recipientId, { attachment: message.attachment });
    }
    if (message.elements !== undefined && message.elements !== null) {
      await this.send(recipientId, { elements: message.elements });
    }
  }
}

/**
 * Collects the messages of one request instead of sending them (Rasa's
 * `CollectingOutputChannel`): the REST channel and `POST .../messages` answer with them.
 * Each collected message is `{recipient_id, text?, image?, buttons?, quick_replies?,
 * attachment?, elements?, custom?}` — keys without a value are left out, as Rasa does.
 */
export class CollectingOutputChannel extends OutputChannel {
  readonly name: string;
  readonly messages: JsonObject[] = [];

  constructor(name = 'collector') {
    super();
    this.name = name;
  }

  send(recipientId: string, message: BotMessage): Promise<void> {
    const collected: JsonObject = { recipient_id: recipientId };
    for (const [key, value] of Object.entries(message)) {
      if (value !== null && value !== undefined) collected[key] = value;
    }
    this.messages.push(collected);
    return Promise.resolve();
  }
}
