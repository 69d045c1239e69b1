import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

/** **[Pro]** `flow_started`: a flow began. */
export interface FlowStarted extends EventBase {
  readonly type: 'flow_started';
  readonly flowId: string | null;
}

export function flowStarted(init: EventBaseInit & { readonly flowId: string | null }): FlowStarted {
  return { type: 'flow_started', ...eventBase(init), flowId: init.flowId };
}

export const FLOW_STARTED_KIND = defineEvent<FlowStarted>({
  type: 'flow_started',
  decode: (raw, base) => flowStarted({ ...base, flowId: optionalString(raw.flow_id) }),
  encode: (e, d) => {
    d.flow_id = e.flowId;
  },
  schema: stringFields('flow_id'),
  example: { event: 'flow_started', timestamp: 1700000000.5, flow_id: 'transfer' },
});
