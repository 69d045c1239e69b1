import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
