import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

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
