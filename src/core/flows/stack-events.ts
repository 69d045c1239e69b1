import { type DialogueEvent } from 'src/core/events/dialogue-event';
import {
  dialogueStackUpdated,
  EMPTY_STACK,
  rememberStackStep,
  stackAfter,
  type DialogueStackUpdated,
} from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { pythonJsonDumps } from 'src/core/story/python-json';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { DialogueStack } from './stack';

/** Rasa 3.7 kept the stack in this slot; later trackers use `stack` events. */
export const LEGACY_DIALOGUE_STACK_SLOT = 'dialogue_stack';

function framesOf(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isJsonObject).map((f) => ({ ...f })) : [];
}

/**
 * The tracker's stack as a list of frames, bottom first: the tracker's own list (shared: callers
 * must not change it). A tracker without `stack` events whose legacy `dialogue_stack` slot holds
 * frames yields those (copies).
 */
export function trackerStackFrames(tracker: DialogueStateTracker): readonly JsonObject[] {
  const stack = tracker.stack;
  if (stack.length === 0) {
    const legacy = framesOf(tracker.getSlot(LEGACY_DIALOGUE_STACK_SLOT));
    return legacy.length > 0 ? legacy : (stack as readonly JsonObject[]);
  }
  return stack.every(isJsonObject) ? stack : framesOf(stack);
}

/** A working copy of the tracker's stack. */
export function stackOf(tracker: DialogueStateTracker): DialogueStack {
  return new DialogueStack(trackerStackFrames(tracker));
}

/**
 * The `stack` event that turns `before` (the tracker's stack) into `stack`, its `update` the
 * RFC 6902 patch as a JSON string; null when nothing changed. The event remembers the list it
 * leads to from `before` (`stackAfter(before, event)` then costs nothing): pass the tracker's
 * own list, not a copy.
 */
export function stackEvent(
  stack: DialogueStack,
  before: readonly unknown[],
  timestamp: number,
): DialogueStackUpdated | null {
  const ops = stack.patchFrom(before);
  if (ops.length === 0) return null;
  // Rasa writes the patch with Python's json.dumps (`", "` and `": "` separators).
  const event = dialogueStackUpdated({ timestamp, update: pythonJsonDumps(ops) });
  rememberStackStep(event, before, stack.toJSON());
  return event;
}

/**
 * One `stack` event that does what `first` and then `second` do: its patch is their operations in
 * order (RFC 6902 applies them one after the other), its time and metadata `first`'s. `before`
 * is the list `first` applies to (the tracker's own); the event remembers the list it leads to.
 */
export function joinedStackEvent(
  first: DialogueStackUpdated,
  second: DialogueStackUpdated,
  before: readonly unknown[],
): DialogueStackUpdated {
  const after = stackAfter(stackAfter(before, first), second);
  const event = dialogueStackUpdated({
    timestamp: first.timestamp,
    metadata: first.metadata,
    update: joinedPatches(first.update, second.update),
  });
  rememberStackStep(event, before, after);
  return event;
}

/**
 * Two patches as one list. Both are `stackEvent`'s: non-empty JSON lists as Python's json.dumps
 * writes them (`[` … `]`, items separated by `, `).
 */
function joinedPatches(first: string, second: string): string {
  return `${first.slice(0, -1)}, ${second.slice(1)}`;
}

/**
 * Applies a `stack` event's patch to a frame list: a new list, shared with whoever applies the
 * same event to the same list (callers must not change it); the input is not changed.
 */
export function applyStackEvent(
  frames: readonly unknown[],
  event: DialogueStackUpdated,
): JsonObject[] {
  return stackAfter(frames, event) as JsonObject[];
}

/**
 * Rasa's "previous stack states": the stack after each `stack` event among the tracker's applied
 * events, oldest first (a session end starts over from an empty stack).
 */
export function previousStackStates(tracker: DialogueStateTracker): JsonObject[][] {
  return stackStatesOf(tracker.appliedEvents());
}

/** Events after which the tracker's stack is empty again. */
const STACK_RESETS: ReadonlySet<string> = new Set([
  'restart',
  'session_started',
  'session_ended',
  'routing_session_ended',
]);

interface StackStates {
  upTo: number;
  last: DialogueEvent | undefined;
  frames: JsonObject[];
  states: JsonObject[][];
}

/**
 * Stack states already computed for an event list. A tracker's applied events are one list that
 * grows as events arrive, and a turn asks for its stack states several times: each call goes on
 * from where the last one stopped (a list that changed before that point is walked again).
 */
const STACK_STATES = new WeakMap<readonly DialogueEvent[], StackStates>();

/**
 * The stack after each `stack` event of `events`, oldest first. The lists are shared: callers
 * must not change them.
 */
export function stackStatesOf(events: readonly DialogueEvent[]): JsonObject[][] {
  let known = STACK_STATES.get(events);
  if (known === undefined || known.upTo > events.length || events[known.upTo - 1] !== known.last) {
    known = { upTo: 0, last: undefined, frames: EMPTY_STACK as JsonObject[], states: [] };
    STACK_STATES.set(events, known);
  }
  for (let i = known.upTo; i < events.length; i++) {
    const event = events[i] as DialogueEvent;
    if (event.type === 'stack') {
      try {
        known.frames = applyStackEvent(known.frames, event);
      } catch {
        continue;
      }
      known.states.push(known.frames);
    } else if (STACK_RESETS.has(event.type)) {
      known.frames = EMPTY_STACK as JsonObject[];
    }
  }
  known.upTo = events.length;
  known.last = events[events.length - 1];
  return known.states.slice();
}

/**
 * The active flow (Rasa `tracker.active_flow`): the `flow_id` of the stack's context (inside a
 * collect, the user flow's), or null on an empty stack.
 */
export function activeFlowOf(stack: DialogueStack): string | null {
  const flowId = stack.context().flow_id;
  return typeof flowId === 'string' ? flowId : null;
}
