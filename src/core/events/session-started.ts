import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `session_started`: a new conversation session begins; state is reset. */
export interface SessionStarted extends EventBase {
  readonly type: 'session_started';
}

export function sessionStarted(init: EventBaseInit): SessionStarted {
  return { type: 'session_started', ...eventBase(init) };
}

export const SESSION_STARTED_KIND = defineEvent<SessionStarted>({
  type: 'session_started',
  decode: (_raw, base) => sessionStarted(base),
  apply: (_e, state) => state.reset(),
  example: { event: 'session_started', timestamp: 1700000000.5 },
});
