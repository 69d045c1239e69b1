import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalString } from 'src/core/events/json-values';

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

export const AGENT_UTTERED_KIND = defineEvent<AgentUttered>({
  type: 'agent',
  decode: (raw, base) =>
    agentUttered({ ...base, text: optionalString(raw.text), data: raw.data ?? null }),
  encode: (e, d) => {
    d.text = e.text;
    d.data = e.data;
  },
  example: { event: 'agent', timestamp: 1700000000.5, text: 'a human here', data: { x: 1 } },
});
