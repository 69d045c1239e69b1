import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** **[Pro]** `flow_completed`: a flow completed at a step. */
export interface FlowCompleted extends EventBase {
  readonly type: 'flow_completed';
  readonly flowId: string | null;
  readonly stepId: string | null;
}

export function flowCompleted(
  init: EventBaseInit & { readonly flowId: string | null; readonly stepId: string | null },
): FlowCompleted {
  return { type: 'flow_completed', ...eventBase(init), flowId: init.flowId, stepId: init.stepId };
}
