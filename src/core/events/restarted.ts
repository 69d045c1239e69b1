import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `restart`: the conversation starts over; state is reset and \`action_session_start\` follows. */
export interface Restarted extends EventBase {
  readonly type: 'restart';
}

export function restarted(init: EventBaseInit): Restarted {
  return { type: 'restart', ...eventBase(init) };
}
