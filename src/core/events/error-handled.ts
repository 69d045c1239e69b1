import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { extrasOf } from 'src/core/events/wire-fields';

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

const NO_KNOWN_FIELDS: readonly string[] = [];

export const ERROR_HANDLED_KIND = defineEvent<ErrorHandled>({
  type: 'error',
  decode: (raw, base) => errorHandled({ ...base, extras: extrasOf(raw, NO_KNOWN_FIELDS) }),
  encode: (e, d) => {
    Object.assign(d, e.extras);
  },
  example: { event: 'error', timestamp: 1700000000.5, error_type: 'rasa_internal_error', info: {} },
});
