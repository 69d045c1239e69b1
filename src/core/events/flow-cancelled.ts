import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** **[Pro]** `flow_cancelled`: a flow was cancelled at a step. */
export interface FlowCancelled extends EventBase {
  readonly type: 'flow_cancelled';
  readonly flowId: string | null;
  readonly stepId: string | null;
}

export function flowCancelled(
  init: EventBaseInit & { readonly flowId: string | null; readonly stepId: string | null },
): FlowCancelled {
  return { type: 'flow_cancelled', ...eventBase(init), flowId: init.flowId, stepId: init.stepId };
}
