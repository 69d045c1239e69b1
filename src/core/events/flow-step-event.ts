import { defineEvent, type EventKind } from 'src/core/events/define-event';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';

/**
 * The shape of the flow events that name a flow and the step it stood on (`flow_completed`,
 * `flow_interrupted`, `flow_resumed`, `flow_cancelled`): `flow_id` and `step_id` on the wire.
 */
export interface FlowStepEvent<T extends string> extends EventBase {
  readonly type: T;
  readonly flowId: string | null;
  readonly stepId: string | null;
}

export type FlowStepInit = EventBaseInit & {
  readonly flowId: string | null;
  readonly stepId: string | null;
};

export function flowStepEvent<T extends string>(type: T, init: FlowStepInit): FlowStepEvent<T> {
  return { type, ...eventBase(init), flowId: init.flowId, stepId: init.stepId };
}

/** The catalogue entry of such an event: decode, encode, schema and example are the same. */
export function flowStepKind<E extends FlowStepEvent<string> & DialogueEvent>(
  type: E['type'],
  create: (init: FlowStepInit) => E,
): EventKind<E> {
  return defineEvent<E>({
    type,
    decode: (raw, base) =>
      create({ ...base, flowId: optionalString(raw.flow_id), stepId: optionalString(raw.step_id) }),
    encode: (e, d) => {
      d.flow_id = e.flowId;
      d.step_id = e.stepId;
    },
    schema: stringFields('flow_id', 'step_id'),
    example: { event: type, timestamp: 1700000000.5, flow_id: 'f', step_id: 's' },
  });
}
