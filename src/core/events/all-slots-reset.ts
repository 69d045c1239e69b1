import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `reset_slots`: every slot goes back to its initial value. */
export interface AllSlotsReset extends EventBase {
  readonly type: 'reset_slots';
}

export function allSlotsReset(init: EventBaseInit): AllSlotsReset {
  return { type: 'reset_slots', ...eventBase(init) };
}

export const ALL_SLOTS_RESET_KIND = defineEvent<AllSlotsReset>({
  type: 'reset_slots',
  decode: (_raw, base) => allSlotsReset(base),
  apply: (_e, state) => state.resetSlots(),
  example: { event: 'reset_slots', timestamp: 1700000000.5 },
});
