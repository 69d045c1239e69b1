import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
