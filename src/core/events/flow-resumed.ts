import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

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

export const FLOW_RESUMED_KIND = defineEvent<FlowResumed>({
  type: 'flow_resumed',
  decode: (raw, base) =>
    flowResumed({
      ...base,
      flowId: optionalString(raw.flow_id),
      stepId: optionalString(raw.step_id),
    }),
  encode: (e, d) => {
    d.flow_id = e.flowId;
    d.step_id = e.stepId;
  },
  schema: stringFields('flow_id', 'step_id'),
  example: { event: 'flow_resumed', timestamp: 1700000000.5, flow_id: 'f', step_id: 's' },
});
