import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

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
