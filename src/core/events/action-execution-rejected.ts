import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalNumber, optionalString } from 'src/core/events/json-values';

/** `action_execution_rejected`: the predicted action refused to run (e.g. a form rejected input). */
export interface ActionExecutionRejected extends EventBase {
  readonly type: 'action_execution_rejected';
  readonly name: string | null;
  readonly policy: string | null;
  readonly confidence: number | null;
}

export function actionExecutionRejected(
  init: EventBaseInit & {
    readonly name: string | null;
    readonly policy?: string | null;
    readonly confidence?: number | null;
  },
): ActionExecutionRejected {
  return {
    type: 'action_execution_rejected',
    ...eventBase(init),
    name: init.name,
    policy: init.policy ?? null,
    confidence: init.confidence ?? null,
  };
}

export const ACTION_EXECUTION_REJECTED_KIND = defineEvent<ActionExecutionRejected>({
  type: 'action_execution_rejected',
  decode: (raw, base) =>
    actionExecutionRejected({
      ...base,
      name: optionalString(raw.name),
      policy: optionalString(raw.policy),
      confidence: optionalNumber(raw.confidence),
    }),
  encode: (e, d) => {
    d.name = e.name;
    d.policy = e.policy;
    d.confidence = e.confidence;
  },
  apply: (e, state) => {
    if (state.loop !== null && e.name === state.activeLoopName) {
      state.loop = { ...state.loop, rejected: true };
    }
  },
  storeColumn: 'action',
  example: {
    event: 'action_execution_rejected',
    timestamp: 1700000000.5,
    name: 'restaurant_form',
    policy: null,
    confidence: null,
  },
});
