import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/**
 * `loop_interrupted`: whether the active loop was interrupted (an unhappy path). Legacy
 * `form_validation {validate}` events are read as this kind with `isInterrupted = !validate`.
 */
export interface LoopInterrupted extends EventBase {
  readonly type: 'loop_interrupted';
  readonly isInterrupted: boolean;
}

export function loopInterrupted(
  init: EventBaseInit & { readonly isInterrupted: boolean },
): LoopInterrupted {
  return { type: 'loop_interrupted', ...eventBase(init), isInterrupted: init.isInterrupted };
}
