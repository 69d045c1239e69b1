import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

/**
 * `error`: **[Pro]** an error was handled during the turn.
 * Its exact Rasa Pro fields are not pinned, so any extra fields are kept as they came.
 */
export interface ErrorHandled extends EventBase {
  readonly type: 'error';
  /** Fields besides `event`, `timestamp` and `metadata`, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function errorHandled(init: EventBaseInit & { readonly extras?: JsonObject }): ErrorHandled {
  return { type: 'error', ...eventBase(init), extras: init.extras ?? {} };
}
