import { ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `restart`: the conversation starts over; state is reset and \`action_session_start\` follows. */
export interface Restarted extends EventBase {
  readonly type: 'restart';
}

export function restarted(init: EventBaseInit): Restarted {
  return { type: 'restart', ...eventBase(init) };
}

export const RESTARTED_KIND = defineEvent<Restarted>({
  type: 'restart',
  decode: (_raw, base) => restarted(base),
  apply: (_e, state) => {
    state.reset();
    state.followup = ACTION_SESSION_START_NAME;
  },
  example: { event: 'restart', timestamp: 1700000000.5 },
});
