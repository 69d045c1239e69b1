import {
  flowStepEvent,
  type FlowStepEvent,
  type FlowStepInit,
  flowStepKind,
} from 'src/core/events/flow-step-event';

/** **[Pro]** `flow_interrupted`: a flow was interrupted at a step. */
export type FlowInterrupted = FlowStepEvent<'flow_interrupted'>;

export function flowInterrupted(init: FlowStepInit): FlowInterrupted {
  return flowStepEvent('flow_interrupted', init);
}

export const FLOW_INTERRUPTED_KIND = flowStepKind<FlowInterrupted>(
  'flow_interrupted',
  flowInterrupted,
);
