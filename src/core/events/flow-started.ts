import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** **[Pro]** `flow_started`: a flow began. */
export interface FlowStarted extends EventBase {
  readonly type: 'flow_started';
  readonly flowId: string | null;
}

export function flowStarted(init: EventBaseInit & { readonly flowId: string | null }): FlowStarted {
  return { type: 'flow_started', ...eventBase(init), flowId: init.flowId };
}
