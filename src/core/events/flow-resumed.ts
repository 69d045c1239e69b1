import {
  flowStepEvent,
  type FlowStepEvent,
  type FlowStepInit,
  flowStepKind,
} from 'src/core/events/flow-step-event';

/** **[Pro]** `flow_resumed`: an interrupted flow resumed at a step. */
export type FlowResumed = FlowStepEvent<'flow_resumed'>;

export function flowResumed(init: FlowStepInit): FlowResumed {
  return flowStepEvent('flow_resumed', init);
}

export const FLOW_RESUMED_KIND = flowStepKind<FlowResumed>('flow_resumed', flowResumed);
