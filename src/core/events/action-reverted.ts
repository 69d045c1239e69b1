import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `undo`: the latest action and what it did are reverted. */
export interface ActionReverted extends EventBase {
  readonly type: 'undo';
}

export function actionReverted(init: EventBaseInit): ActionReverted {
  return { type: 'undo', ...eventBase(init) };
}
