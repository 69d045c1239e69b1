import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { invalidEvent } from 'src/core/events/wire-fields';

/** `slot`: a slot was set to a value. */
export interface SlotSet extends EventBase {
  readonly type: 'slot';
  readonly name: string;
  readonly value: unknown;
}

export function slotSet(
  init: EventBaseInit & { readonly name: string; readonly value: unknown },
): SlotSet {
  return { type: 'slot', ...eventBase(init), name: init.name, value: init.value ?? null };
}

/** Rasa Pro's built-in slot that is never written into stories. */
const FLOW_HASHES_SLOT = 'flow_hashes';

export const SLOT_SET_KIND = defineEvent<SlotSet>({
  type: 'slot',
  decode: (raw, base) => {
    if (typeof raw.name !== 'string') invalidEvent("Slot event needs a string 'name'.", raw);
    return slotSet({ ...base, name: raw.name, value: raw.value ?? null });
  },
  encode: (e, d) => {
    d.name = e.name;
    d.value = e.value;
  },
  schema: { properties: { name: { type: 'string' }, value: {} }, required: ['name', 'value'] },
  apply: (e, state) => {
    // Unknown slots are ignored for the state; the event stays in the log.
    if (state.slotValues.has(e.name)) state.slotValues.set(e.name, e.value);
  },
  story: (e) => (e.name === FLOW_HASHES_SLOT ? null : { slot_was_set: [{ [e.name]: e.value }] }),
  example: { event: 'slot', timestamp: 1700000000.5, name: 'cuisine', value: 'italian' },
});
