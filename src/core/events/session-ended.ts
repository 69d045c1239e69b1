import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { extrasOf } from 'src/core/events/wire-fields';

/**
 * `session_ended`: **[Pro]** the conversation session ended; state is reset.
 * Its exact Rasa Pro fields are not pinned, so any extra fields are kept as they came.
 */
export interface SessionEnded extends EventBase {
  readonly type: 'session_ended';
  /** Fields besides `event`, `timestamp` and `metadata`, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function sessionEnded(init: EventBaseInit & { readonly extras?: JsonObject }): SessionEnded {
  return { type: 'session_ended', ...eventBase(init), extras: init.extras ?? {} };
}

const NO_KNOWN_FIELDS: readonly string[] = [];

export const SESSION_ENDED_KIND = defineEvent<SessionEnded>({
  type: 'session_ended',
  decode: (raw, base) => sessionEnded({ ...base, extras: extrasOf(raw, NO_KNOWN_FIELDS) }),
  encode: (e, d) => {
    Object.assign(d, e.extras);
  },
  apply: (_e, state) => state.reset(),
  example: { event: 'session_ended', timestamp: 1700000000.5, metadata: { reason: 'timeout' } },
});
