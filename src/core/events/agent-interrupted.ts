import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

/**
 * **[Pro]** `agent_interrupted`: a sub-agent was interrupted.
 * Fields beyond those of Rasa's event schema are kept in `extras`.
 */
export interface AgentInterrupted extends EventBase {
  readonly type: 'agent_interrupted';
  readonly agentId: string | null;
  readonly flowId: string | null;
  /** Fields besides the known ones, in their original order. */
  readonly extras: Readonly<JsonObject>;
}

export function agentInterrupted(
  init: EventBaseInit & {
    readonly agentId: string | null;
    readonly flowId: string | null;
    readonly extras?: JsonObject;
  },
): AgentInterrupted {
  return {
    type: 'agent_interrupted',
    ...eventBase(init),
    agentId: init.agentId,
    flowId: init.flowId,
    extras: init.extras ?? {},
  };
}
