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
 * **[Pro]** `agent_started`: a sub-agent started.
 * Fields beyond those of Rasa's event schema are kept in `extras`.
 */
export interface AgentStarted extends EventBase {
  readonly type: 'agent_started';
  readonly agentId: string | null;
  readonly flowId: string | null;
  /** Fields besides the known ones, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function agentStarted(
  init: EventBaseInit & {
    readonly agentId: string | null;
    readonly flowId: string | null;
    readonly extras?: JsonObject;
  },
): AgentStarted {
  return {
    type: 'agent_started',
    ...eventBase(init),
    agentId: init.agentId,
    flowId: init.flowId,
    extras: init.extras ?? {},
  };
}

const KNOWN_FIELDS = ['agent_id', 'flow_id'];

export const AGENT_STARTED_KIND = defineEvent<AgentStarted>({
  type: 'agent_started',
  decode: (raw, base) =>
    agentStarted({
      ...base,
      agentId: optionalString(raw.agent_id),
      flowId: optionalString(raw.flow_id),
      extras: extrasOf(raw, KNOWN_FIELDS),
    }),
  encode: (e, d) => {
    d.agent_id = e.agentId;
    d.flow_id = e.flowId;
    Object.assign(d, e.extras);
  },
  schema: stringFields('agent_id', 'flow_id'),
  example: { event: 'agent_started', timestamp: 1700000000.5, agent_id: 'a', flow_id: 'f' },
});
