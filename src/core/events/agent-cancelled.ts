import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

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
