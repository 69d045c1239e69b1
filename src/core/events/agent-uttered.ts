import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `agent`: a human agent said something. */
export interface AgentUttered extends EventBase {
  readonly type: 'agent';
  readonly text: string | null;
  readonly data: unknown;
}

export function agentUttered(
  init: EventBaseInit & { readonly text?: string | null; readonly data?: unknown },
): AgentUttered {
  return { type: 'agent', ...eventBase(init), text: init.text ?? null, data: init.data ?? null };
}
