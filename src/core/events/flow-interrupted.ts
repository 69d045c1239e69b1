import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** **[Pro]** `flow_interrupted`: a flow was interrupted at a step. */
export interface FlowInterrupted extends EventBase {
  readonly type: 'flow_interrupted';
  readonly flowId: string | null;
  readonly stepId: string | null;
}

export function flowInterrupted(
  init: EventBaseInit & { readonly flowId: string | null; readonly stepId: string | null },
): FlowInterrupted {
  return { type: 'flow_interrupted', ...eventBase(init), flowId: init.flowId, stepId: init.stepId };
}
