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
 * **[Pro]** `agent_cancelled`: a sub-agent was cancelled.
 * Fields beyond those of Rasa's event schema are kept in `extras`.
 */
export interface AgentCancelled extends EventBase {
  readonly type: 'agent_cancelled';
  readonly agentId: string | null;
  readonly flowId: string | null;
  readonly reason: string | null;
  /** Fields besides the known ones, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function agentCancelled(
  init: EventBaseInit & {
    readonly agentId: string | null;
    readonly flowId: string | null;
    readonly reason?: string | null;
    readonly extras?: JsonObject;
  },
): AgentCancelled {
  return {
    type: 'agent_cancelled',
    ...eventBase(init),
    agentId: init.agentId,
    flowId: init.flowId,
    reason: init.reason ?? null,
    extras: init.extras ?? {},
  };
}

const KNOWN_FIELDS = ['agent_id', 'flow_id', 'reason'];

export const AGENT_CANCELLED_KIND = defineEvent<AgentCancelled>({
  type: 'agent_cancelled',
  decode: (raw, base) =>
    agentCancelled({
      ...base,
      agentId: optionalString(raw.agent_id),
      flowId: optionalString(raw.flow_id),
      reason: optionalString(raw.reason),
      extras: extrasOf(raw, KNOWN_FIELDS),
    }),
  encode: (e, d) => {
    d.agent_id = e.agentId;
    d.flow_id = e.flowId;
    d.reason = e.reason;
    Object.assign(d, e.extras);
  },
  schema: stringFields('agent_id', 'flow_id', 'reason'),
  example: {
    event: 'agent_cancelled',
    timestamp: 1700000000.5,
    agent_id: 'a',
    flow_id: 'f',
    reason: 'user',
  },
});
