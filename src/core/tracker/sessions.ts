import { ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { type DialogueEvent } from 'src/core/events/dialogue-event';

/** Whether the event is `action(action_session_start)`. */
export function isSessionStartAction(event: DialogueEvent): boolean {
  return event.type === 'action' && event.name === ACTION_SESSION_START_NAME;
}

/**
 * Splits a conversation into sessions: a new session begins at each
 * `action(action_session_start)`, which is its first event (Rasa `split_events`). Events before
 * the first session start form a session of their own; no events → no sessions.
 */
export function splitSessions(events: readonly DialogueEvent[]): DialogueEvent[][] {
  const sessions: DialogueEvent[][] = [];
  let current: DialogueEvent[] = [];
  for (const event of events) {
    if (isSessionStartAction(event)) {
      if (current.length > 0) sessions.push(current);
      current = [event];
    } else {
      current.push(event);
    }
  }
  if (current.length > 0) sessions.push(current);
  return sessions;
}
