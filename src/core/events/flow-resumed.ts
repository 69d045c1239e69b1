import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** **[Pro]** `flow_resumed`: an interrupted flow resumed at a step. */
export interface FlowResumed extends EventBase {
  readonly type: 'flow_resumed';
  readonly flowId: string | null;
  readonly stepId: string | null;
}

export function flowResumed(
  init: EventBaseInit & { readonly flowId: string | null; readonly stepId: string | null },
): FlowResumed {
  return { type: 'flow_resumed', ...eventBase(init), flowId: init.flowId, stepId: init.stepId };
}
