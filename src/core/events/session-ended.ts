import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

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
