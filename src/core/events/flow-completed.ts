import {
  flowStepEvent,
  type FlowStepEvent,
  type FlowStepInit,
  flowStepKind,
} from 'src/core/events/flow-step-event';

/** **[Pro]** `flow_completed`: a flow completed at a step. */
export type FlowCompleted = FlowStepEvent<'flow_completed'>;

export function flowCompleted(init: FlowStepInit): FlowCompleted {
  return flowStepEvent('flow_completed', init);
}

export const FLOW_COMPLETED_KIND = flowStepKind<FlowCompleted>('flow_completed', flowCompleted);
