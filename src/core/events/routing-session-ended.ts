import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

/**
 * `routing_session_ended`: **[Pro]** the coexistence routing session ended; slots not shared for coexistence are reset.
 * Its exact Rasa Pro fields are not pinned, so any extra fields are kept as they came.
 */
export interface RoutingSessionEnded extends EventBase {
  readonly type: 'routing_session_ended';
  /** Fields besides `event`, `timestamp` and `metadata`, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function routingSessionEnded(
  init: EventBaseInit & { readonly extras?: JsonObject },
): RoutingSessionEnded {
  return { type: 'routing_session_ended', ...eventBase(init), extras: init.extras ?? {} };
}
