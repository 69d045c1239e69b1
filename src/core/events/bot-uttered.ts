import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { isJsonObject, optionalString } from 'src/core/events/json-values';
import { invalidEvent } from 'src/core/events/wire-fields';

/** `bot`: the bot said something. */
export interface BotUttered extends EventBase {
  readonly type: 'bot';
  readonly text: string | null;
  /**
   * Rich parts of the message as produced by the action, typically
   * `{ elements, quick_replies, buttons, attachment, image, custom }`; `{}` when none.
   */
  readonly data: Readonly<JsonObject>;
}

export function botUttered(
  init: EventBaseInit & { readonly text?: string | null; readonly data?: JsonObject | null },
): BotUttered {
  return { type: 'bot', ...eventBase(init), text: init.text ?? null, data: init.data ?? {} };
}

export const BOT_UTTERED_KIND = defineEvent<BotUttered>({
  type: 'bot',
  decode: (raw, base) => {
    const data = raw.data ?? {};
    if (!isJsonObject(data)) invalidEvent("Bot event 'data' must be an object.", raw);
    return botUttered({ ...base, text: optionalString(raw.text), data });
  },
  encode: (e, d) => {
    d.text = e.text;
    d.data = e.data;
    // Always written: already in place after `timestamp` when non-empty, else the last key.
    d.metadata = e.metadata;
  },
  apply: (e, state) => {
    state.latestBot = e;
  },
  example: {
    event: 'bot',
    timestamp: 1700000000.5,
    metadata: { utter_action: 'utter_greet' },
    text: 'Hey! How are you?',
    data: { buttons: [{ title: 'great', payload: '/mood_great' }] },
  },
});
