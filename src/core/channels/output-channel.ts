import { pythonStr } from 'src/core/actions/nlg';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject, isTruthy } from 'src/core/events/json-values';

/**
 * A bot message as actions produce it and channels send it — the keys of Rasa's
 * `send_response` dict: `text`, `image`, `buttons`, `quick_replies`, `attachment`, `elements`,
 * `custom`, plus any extra keys a response defines.
 */
export type BotMessage = JsonObject;

/**
 * Port: where the bot's answers for one incoming message go (Rasa's `OutputChannel`).
 * `sendResponse` dispatches a bot message the way Rasa's `send_response` does, through the
 * `send*` methods (Rasa's names). By default each of them hands its part to `send` as one
 * message — `{text}`, `{text, buttons}`, `{text, quick_replies}`, `{custom}`, `{image}`,
 * `{attachment}` or `{elements}` — so a channel that implements only `send` gets every part once;
 * a channel that renders a part differently overrides that `send*` method (the collecting and
 * socket.io channels do, as Rasa's do).
 */
export abstract class OutputChannel {
  /** Channel name, e.g. `rest`, `callback`, `socketio`, `collector`. */
  abstract readonly name: string;

  /** Delivers one bot message to `recipientId`. */
  abstract send(recipientId: string, message: BotMessage): Promise<void>;

  /**
   * Rasa's `OutputChannel.send_response`, with Python truthiness (an empty list, object or
   * string counts as absent — rasa-sdk sends `buttons: []`, `custom: {}`, `image: null` with
   * every `utter_message`): quick replies, else buttons, else text; then custom, image,
   * attachment and elements, each through its own `send*` method.
   */
  async sendResponse(recipientId: string, message: BotMessage): Promise<void> {
    const text = typeof message.text === 'string' ? message.text : null;
    if (isTruthy(message.quick_replies)) {
      await this.sendQuickReplies(recipientId, text, asList(message.quick_replies));
    } else if (isTruthy(message.buttons)) {
      await this.sendTextWithButtons(recipientId, text, asList(message.buttons));
    } else if (isTruthy(message.text)) {
      await this.sendTextMessage(recipientId, text ?? pythonStr(message.text));
    }
    if (isTruthy(message.custom)) await this.sendCustomJson(recipientId, message.custom);
    if (isTruthy(message.image)) await this.sendImageUrl(recipientId, message.image);
    if (isTruthy(message.attachment)) await this.sendAttachment(recipientId, message.attachment);
    if (isTruthy(message.elements)) await this.sendElements(recipientId, asList(message.elements));
  }

  /** Rasa's `send_text_message`. */
  sendTextMessage(recipientId: string, text: string): Promise<void> {
    return this.send(recipientId, { text });
  }

  /** Rasa's `send_custom_json`. */
  sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    return this.send(recipientId, { custom: custom });
  }

  /** Rasa's `send_image_url`. */
  sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    return this.send(recipientId, { image: image });
  }

  /** Rasa's `send_attachment`. */
  sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    return this.send(recipientId, { attachment: attachment });
  }

  /** Rasa's `send_text_with_buttons`. */
  sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    return this.send(recipientId, { text, buttons: buttons });
  }

  /** Rasa's `send_quick_replies`. */
  sendQuickReplies(
    recipientId: string,
    text: string | null,
    quickReplies: readonly unknown[],
  ): Promise<void> {
    return this.send(recipientId, { text, quick_replies: quickReplies });
  }

  /** Rasa's `send_elements`. */
  sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    return this.send(recipientId, { elements: elements });
  }
}

function asList(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [value];
}

/**
 * Collects the messages of one request instead of sending them (Rasa's
 * `CollectingOutputChannel`): the REST channel and `POST .../messages` answer with them.
 * Each collected message is `{recipient_id, text?, image?, buttons?, attachment?, custom?}` —
 * keys without a value are left out, as Rasa does. Text alone is split on blank lines; text with
 * buttons (or quick replies, which become `buttons`) is one message; each element becomes the
 * text `"<title> : <subtitle>"` with its buttons.
 */
export class CollectingOutputChannel extends OutputChannel {
  readonly name: string;
  readonly messages: JsonObject[] = [];

  constructor(name = 'collector') {
    super();
    this.name = name;
  }

  /** Rasa's `_persist_message` of `_message(...)`: null values are dropped. */
  send(recipientId: string, message: BotMessage): Promise<void> {
    const collected: JsonObject = { recipient_id: recipientId };
    for (const [key, value] of Object.entries(message)) {
      if (value !== null && value !== undefined) collected[key] = value;
    }
    this.messages.push(collected);
    return Promise.resolve();
  }

  override async sendTextMessage(recipientId: string, text: string): Promise<void> {
    for (const part of text.trim().split('\n\n')) await this.send(recipientId, { text: part });
  }

  /** Rasa's base `send_quick_replies`, which the collecting channel keeps: sent as buttons. */
  override sendQuickReplies(
    recipientId: string,
    text: string | null,
    quickReplies: readonly unknown[],
  ): Promise<void> {
    return this.sendTextWithButtons(recipientId, text, quickReplies);
  }

  /** Rasa's base `send_elements`, which the collecting channel keeps. */
  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    for (const element of elements) {
      const e = isJsonObject(element) ? element : {};
      const title = e.title === undefined ? '' : pythonStr(e.title);
      const subtitle = e.subtitle === undefined ? '' : pythonStr(e.subtitle);
      await this.sendTextWithButtons(
        recipientId,
        `${title} : ${subtitle}`,
        Array.isArray(e.buttons) ? e.buttons : [],
      );
    }
  }
}
