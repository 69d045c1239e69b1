import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

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

export const FLOW_INTERRUPTED_KIND = defineEvent<FlowInterrupted>({
  type: 'flow_interrupted',
  decode: (raw, base) =>
    flowInterrupted({
      ...base,
      flowId: optionalString(raw.flow_id),
      stepId: optionalString(raw.step_id),
    }),
  encode: (e, d) => {
    d.flow_id = e.flowId;
    d.step_id = e.stepId;
  },
  schema: stringFields('flow_id', 'step_id'),
  example: { event: 'flow_interrupted', timestamp: 1700000000.5, flow_id: 'f', step_id: 's' },
});
