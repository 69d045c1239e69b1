import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { extrasOf } from 'src/core/events/wire-fields';

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

/** The slots a routing session's end resets: those not shared for coexistence. */
function notSharedForCoexistence(def: SlotDefinition): boolean {
  return def.properties.shared_for_coexistence !== true;
}

const NO_KNOWN_FIELDS: readonly string[] = [];

export const ROUTING_SESSION_ENDED_KIND = defineEvent<RoutingSessionEnded>({
  type: 'routing_session_ended',
  decode: (raw, base) => routingSessionEnded({ ...base, extras: extrasOf(raw, NO_KNOWN_FIELDS) }),
  encode: (e, d) => {
    Object.assign(d, e.extras);
  },
  apply: (_e, state) => state.resetSlots(notSharedForCoexistence),
  example: { event: 'routing_session_ended', timestamp: 1700000000.5 },
});
