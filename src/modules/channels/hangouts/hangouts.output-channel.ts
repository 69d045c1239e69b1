import { Logger } from '@nestjs/common';
import { pythonStr } from 'src/core/actions/nlg';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject, isTruthy } from 'src/core/events/json-values';
import { ConnectorOutputChannel } from 'src/modules/channels/connector/connector';

type Card = JsonObject;

const textCard = (text: unknown): Card => ({
  sections: [{ widgets: [{ textParagraph: { text } }] }],
});

/**
 * Rasa's HangoutsOutput: Google Chat takes one synchronous answer per event, so the bot's
 * messages of a turn are collected into one Google Chat message (`message`, the HTTP answer):
 *
 * - text is `{text}`; two texts are joined with a space;
 * - anything else is a card (legacy `cards` format, as Rasa): an image is an `image` widget
 *   (`imageUrl`), buttons a `textParagraph` widget and a `buttons` widget of `textButton`s whose
 *   `onClick.action.actionMethodName` is the payload (a CARD_CLICKED event sends it back);
 * - once one part is a card, every text becomes a `textParagraph` card, in order;
 * - custom JSON is taken as a Google Chat message as given (it must have `text` or `cards`);
 *   an attachment is text. Quick replies are buttons; elements are the base fallback (a card
 *   per element), where Rasa fails the turn.
 *
 * A part Rasa refuses (a button without title or payload, custom JSON with neither `text` nor
 * `cards`) is logged and left out; Rasa's turn fails there.
 */
export class HangoutsOutputChannel extends ConnectorOutputChannel {
  private static readonly log = new Logger('Connector[hangouts]');
  readonly name = 'hangouts';
  /** The Google Chat message collected so far (`{}` when the bot said nothing). */
  message: JsonObject = {};

  private persist(part: JsonObject): void {
    const state = isTruthy(this.message.text)
      ? 'text'
      : isTruthy(this.message.cards)
        ? 'cards'
        : null;
    const next = isTruthy(part.text) ? 'text' : isTruthy(part.cards) ? 'cards' : null;
    if (next === null) {
      HangoutsOutputChannel.log.error(
        "Your message to Hangouts channel must either contain 'text' or 'cards'!",
      );
      return;
    }
    const cards = (m: JsonObject): unknown[] => (Array.isArray(m.cards) ? m.cards : [m.cards]);
    if (next === 'text' && state === 'text') {
      this.message = { text: `${pythonStr(this.message.text)} ${pythonStr(part.text)}` };
    } else if (next === 'cards' && state === 'cards') {
      this.message = { cards: [...cards(this.message), ...cards(part)] };
    } else if (next === 'text' && state === 'cards') {
      this.message = { cards: [...cards(this.message), textCard(part.text)] };
    } else if (next === 'cards' && state === 'text') {
      this.message = { cards: [textCard(this.message.text), ...cards(part)] };
    } else if (next === 'text') {
      this.message = { text: part.text };
    } else {
      this.message = part;
    }
  }

  sendTextMessage(_recipientId: string, text: string): Promise<void> {
    this.persist({ text });
    return Promise.resolve();
  }

  override sendImageUrl(_recipientId: string, image: unknown): Promise<void> {
    this.persist({ cards: [{ sections: [{ widgets: [{ image: { imageUrl: image } }] }] }] });
    return Promise.resolve();
  }

  override sendTextWithButtons(
    _recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    const widgets: JsonObject[] = [];
    for (const b of buttons) {
      if (!isJsonObject(b) || !('title' in b) || !('payload' in b)) {
        HangoutsOutputChannel.log.error(
          "Buttons must be a list of dicts with 'title' and 'payload' as keys",
        );
        return Promise.resolve();
      }
      widgets.push({
        textButton: { text: b.title, onClick: { action: { actionMethodName: b.payload } } },
      });
    }
    this.persist({
      cards: [{ sections: [{ widgets: [{ textParagraph: { text } }, { buttons: widgets }] }] }],
    });
    return Promise.resolve();
  }

  override sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    return this.sendTextMessage(recipientId, pythonStr(attachment));
  }

  override sendCustomJson(_recipientId: string, custom: unknown): Promise<void> {
    this.persist(isJsonObject(custom) ? custom : {});
    return Promise.resolve();
  }
}
