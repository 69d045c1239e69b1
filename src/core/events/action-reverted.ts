import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `undo`: the latest action and what it did are reverted. */
export interface ActionReverted extends EventBase {
  readonly type: 'undo';
}

export function actionReverted(init: EventBaseInit): ActionReverted {
  return { type: 'undo', ...eventBase(init) };
}

export const ACTION_REVERTED_KIND = defineEvent<ActionReverted>({
  type: 'undo',
  decode: (_raw, base) => actionReverted(base),
  apply: (_e, state) => {
    state.reset();
    state.replayAppliedEvents();
  },
  example: { event: 'undo', timestamp: 1700000000.5 },
});
