import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `reset_slots`: every slot goes back to its initial value. */
export interface AllSlotsReset extends EventBase {
  readonly type: 'reset_slots';
}

export function allSlotsReset(init: EventBaseInit): AllSlotsReset {
  return { type: 'reset_slots', ...eventBase(init) };
}
