import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

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

export const FLOW_COMPLETED_KIND = defineEvent<FlowCompleted>({
  type: 'flow_completed',
  decode: (raw, base) =>
    flowCompleted({
      ...base,
      flowId: optionalString(raw.flow_id),
      stepId: optionalString(raw.step_id),
    }),
  encode: (e, d) => {
    d.flow_id = e.flowId;
    d.step_id = e.stepId;
  },
  schema: stringFields('flow_id', 'step_id'),
  example: { event: 'flow_completed', timestamp: 1700000000.5, flow_id: 'f', step_id: 's' },
});
