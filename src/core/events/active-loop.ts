import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalString } from 'src/core/events/json-values';

/**
 * `active_loop`: activates the loop (form) `name`, or deactivates the active loop when `name` is
 * null. Legacy `form` events are read as this kind and written back as `active_loop`.
 */
export interface ActiveLoop extends EventBase {
  readonly type: 'active_loop';
  readonly name: string | null;
}

export function activeLoop(init: EventBaseInit & { readonly name: string | null }): ActiveLoop {
  return { type: 'active_loop', ...eventBase(init), name: init.name };
}

export const ACTIVE_LOOP_KIND = defineEvent<ActiveLoop>({
  type: 'active_loop',
  decode: (raw, base) => activeLoop({ ...base, name: optionalString(raw.name) }),
  encode: (e, d) => {
    d.name = e.name;
  },
  legacyNames: { form: {} },
  apply: (e, state) => {
    state.loop =
      e.name === null
        ? null
        : {
            name: e.name,
            isInterrupted: false,
            rejected: false,
            triggerMessage: state.latestUser.parseData,
          };
  },
  story: (e) => ({ active_loop: e.name }),
  example: { event: 'active_loop', timestamp: 1700000000.5, name: 'restaurant_form' },
});
