import {
  flowStepEvent,
  type FlowStepEvent,
  type FlowStepInit,
  flowStepKind,
} from 'src/core/events/flow-step-event';

/** **[Pro]** `flow_cancelled`: a flow was cancelled at a step. */
export type FlowCancelled = FlowStepEvent<'flow_cancelled'>;

export function flowCancelled(init: FlowStepInit): FlowCancelled {
  return flowStepEvent('flow_cancelled', init);
}

export const FLOW_CANCELLED_KIND = flowStepKind<FlowCancelled>('flow_cancelled', flowCancelled);
