import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

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

export const FLOW_CANCELLED_KIND = defineEvent<FlowCancelled>({
  type: 'flow_cancelled',
  decode: (raw, base) =>
    flowCancelled({
      ...base,
      flowId: optionalString(raw.flow_id),
      stepId: optionalString(raw.step_id),
    }),
  encode: (e, d) => {
    d.flow_id = e.flowId;
    d.step_id = e.stepId;
  },
  schema: stringFields('flow_id', 'step_id'),
  example: { event: 'flow_cancelled', timestamp: 1700000000.5, flow_id: 'f', step_id: 's' },
});
