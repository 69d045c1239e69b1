import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

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
