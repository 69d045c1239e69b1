import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

/**
 * **[Pro]** `agent_resumed`: a sub-agent resumed.
 * Fields beyond those of Rasa's event schema are kept in `extras`.
 */
export interface AgentResumed extends EventBase {
  readonly type: 'agent_resumed';
  readonly agentId: string | null;
  readonly flowId: string | null;
  /** Fields besides the known ones, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function agentResumed(
  init: EventBaseInit & {
    readonly agentId: string | null;
    readonly flowId: string | null;
    readonly extras?: JsonObject;
  },
): AgentResumed {
  return {
    type: 'agent_resumed',
    ...eventBase(init),
    agentId: init.agentId,
    flowId: init.flowId,
    extras: init.extras ?? {},
  };
}
