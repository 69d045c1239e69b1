import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { optionalString } from 'src/core/events/json-values';
import { extrasOf } from 'src/core/events/wire-fields';

/**
 * **[Pro]** `agent_completed`: a sub-agent completed.
 * Fields beyond those of Rasa's event schema are kept in `extras`.
 */
export interface AgentCompleted extends EventBase {
  readonly type: 'agent_completed';
  readonly agentId: string | null;
  readonly flowId: string | null;
  readonly status: string | null;
  /** Fields besides the known ones, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function agentCompleted(
  init: EventBaseInit & {
    readonly agentId: string | null;
    readonly flowId: string | null;
    readonly status?: string | null;
    readonly extras?: JsonObject;
  },
): AgentCompleted {
  return {
    type: 'agent_completed',
    ...eventBase(init),
    agentId: init.agentId,
    flowId: init.flowId,
    status: init.status ?? null,
    extras: init.extras ?? {},
  };
}

const KNOWN_FIELDS = ['agent_id', 'flow_id', 'status'];

export const AGENT_COMPLETED_KIND = defineEvent<AgentCompleted>({
  type: 'agent_completed',
  decode: (raw, base) =>
    agentCompleted({
      ...base,
      agentId: optionalString(raw.agent_id),
      flowId: optionalString(raw.flow_id),
      status: optionalString(raw.status),
      extras: extrasOf(raw, KNOWN_FIELDS),
    }),
  encode: (e, d) => {
    d.agent_id = e.agentId;
    d.flow_id = e.flowId;
    d.status = e.status;
    Object.assign(d, e.extras);
  },
  schema: stringFields('agent_id', 'flow_id', 'status'),
  example: {
    event: 'agent_completed',
    timestamp: 1700000000.5,
    agent_id: 'a',
    flow_id: 'f',
    status: 'done',
  },
});
