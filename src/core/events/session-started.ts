import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `session_started`: a new conversation session begins; state is reset. */
export interface SessionStarted extends EventBase {
  readonly type: 'session_started';
}

export function sessionStarted(init: EventBaseInit): SessionStarted {
  return { type: 'session_started', ...eventBase(init) };
}
