import { type DialogueEvent } from 'src/core/events/dialogue-event';

function undoTillPrevious(type: DialogueEvent['type'], done: DialogueEvent[]): void {
  while (done.length > 0) {
    const last = done.pop() as DialogueEvent;
    if (last.type === type) break;
  }
}

function isWithinUnhappyPath(
  loopActionName: string,
  event: DialogueEvent,
  nextActionInTheFuture: string | null,
): boolean {
  const loopWasRejected =
    event.type === 'action_execution_rejected' && event.name === loopActionName;
  const otherActionAfterLatestUserUtterance =
    event.type === 'user' &&
    nextActionInTheFuture !== null &&
    nextActionInTheFuture !== loopActionName;
  return loopWasRejected || otherActionAfterLatestUserUtterance;
}

function firstLoopExecutionOrUnhappyPath(
  loopActionName: string,
  applied: readonly DialogueEvent[],
): boolean {
  let nextAction: string | null = null;
  for (let i = applied.length - 1; i >= 0; i--) {
    const event = applied[i] as DialogueEvent;
    // A deactivation means the loop runs for the first time since; older runs were other loops.
    if (event.type === 'active_loop' && event.name === null) return true;
    if (isWithinUnhappyPath(loopActionName, event, nextAction)) return true;
    if (event.type === 'action') {
      if (event.name === loopActionName) return false;
      nextAction = event.name;
    }
  }
  return true;
}

function undoTillPreviousLoopExecution(loopActionName: string, done: DialogueEvent[]): void {
  let offset = 0;
  for (const event of [...done].reverse()) {
    if (event.type === 'action' && event.name === loopActionName) break;
    if (event.type === 'action' || event.type === 'user' || event.type === 'user_featurization') {
      done.splice(done.length - 1 - offset, 1);
    } else {
      // Events kept in place shift the index of the next removal.
      offset += 1;
    }
  }
}

/** The names of the loops the events ever activate (they change how loop actions apply). */
export function loopNamesOf(events: readonly DialogueEvent[]): Set<string> {
  const names = new Set<string>();
  for (const e of events) if (e.type === 'active_loop' && e.name) names.add(e.name);
  return names;
}

/** Applies one event to an applied-events list (one step of `appliedEvents`). */
export function applyEventTo(
  applied: DialogueEvent[],
  event: DialogueEvent,
  loopNames: ReadonlySet<string>,
): DialogueEvent[] {
  if (event.type === 'restart' || event.type === 'session_started') {
    applied.length = 0;
  } else if (event.type === 'undo') {
    undoTillPrevious('action', applied);
  } else if (event.type === 'rewind') {
    undoTillPrevious('user', applied);
    undoTillPrevious('action', applied);
  } else if (
    event.type === 'action' &&
    event.name !== null &&
    loopNames.has(event.name) &&
    !firstLoopExecutionOrUnhappyPath(event.name, applied)
  ) {
    undoTillPreviousLoopExecution(event.name, applied);
  } else {
    applied.push(event);
  }
  return applied;
}

/**
 * Rasa's `applied_events`: the events that make up the current state. `restart` and
 * `session_started` clear the list (and are not kept); `undo` removes back to and including the
 * latest action; `rewind` removes back to and including the latest user message and then the
 * action before it; repeated runs of an active loop's action (not its first run, not in an unhappy
 * path) drop the user messages and actions since the loop's previous run. The loops are those
 * the whole event list ever activates, as in Rasa.
 */
export function appliedEvents(events: readonly DialogueEvent[]): DialogueEvent[] {
  const loopNames = loopNamesOf(events);
  const applied: DialogueEvent[] = [];
  for (const event of events) applyEventTo(applied, event, loopNames);
  return applied;
}
