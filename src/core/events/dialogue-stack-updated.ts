import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { stringFields } from 'src/core/events/event-schema-parts';
import { invalidEvent } from 'src/core/events/wire-fields';
import { applyJsonPatch } from 'src/core/tracker/json-patch';

/** **[Pro]** `stack`: a JSON-Patch (RFC 6902) list, as a JSON string, applied to the dialogue stack. */
export interface DialogueStackUpdated extends EventBase {
  readonly type: 'stack';
  readonly update: string;
}

export function dialogueStackUpdated(
  init: EventBaseInit & { readonly update: string },
): DialogueStackUpdated {
  return { type: 'stack', ...eventBase(init), update: init.update };
}

/** The empty stack every reset starts from (one shared list, so stack states chain by identity). */
export const EMPTY_STACK: readonly unknown[] = Object.freeze([]);

/** The stack an event produced from a given stack (lists are never changed in place). */
interface StackStep {
  readonly before: readonly unknown[];
  readonly after: readonly unknown[];
}

/**
 * What a `stack` event made of the stack it was applied to, kept on the event object under a
 * non-enumerable symbol (not serialised, not compared, not copied by a spread). A turn applies
 * its events to several trackers (the working copy of a prediction, the turn's tracker, the
 * cached session, the stack states a correction looks back on), always in the same order from
 * the same lists: from the second time on, an event whose stack before is the remembered one
 * gives the remembered stack after, with no JSON parse and no patch. (A WeakMap did the same at
 * several times the cost: a key per event of every turn.)
 */
const STEP = Symbol('stackStep');

type WithStep = DialogueStackUpdated & { [STEP]?: StackStep };

function setStep(event: DialogueStackUpdated, step: StackStep): void {
  const e = event as WithStep;
  if (Object.prototype.hasOwnProperty.call(e, STEP)) e[STEP] = step;
  else Object.defineProperty(e, STEP, { value: step, writable: true, enumerable: false });
}

/** Records that `event` turns `before` into `after` (the event's producer knows both). */
export function rememberStackStep(
  event: DialogueStackUpdated,
  before: readonly unknown[],
  after: readonly unknown[],
): void {
  setStep(event, { before, after });
}

/** Carries what `from` is known to do over to its copy `to` (same `update`). */
export function carryStackStep(from: DialogueStackUpdated, to: DialogueStackUpdated): void {
  const step = (from as WithStep)[STEP];
  if (step !== undefined) setStep(to, step);
}

/**
 * The stack after applying `event` to `before` (a new list; `before` is not changed). Throws a
 * DialogueError when the patch does not apply.
 */
export function stackAfter(
  before: readonly unknown[],
  event: DialogueStackUpdated,
): readonly unknown[] {
  const step = (event as WithStep)[STEP];
  if (step !== undefined && step.before === before) return step.after;
  const next = applyJsonPatch(before, JSON.parse(event.update));
  const after = Array.isArray(next) ? next : [];
  setStep(event, { before, after });
  return after;
}

export const DIALOGUE_STACK_UPDATED_KIND = defineEvent<DialogueStackUpdated>({
  type: 'stack',
  decode: (raw, base) => {
    const update = raw.update;
    let patch: unknown;
    try {
      patch = typeof update === 'string' ? JSON.parse(update) : undefined;
    } catch {
      patch = undefined;
    }
    if (typeof update !== 'string' || !Array.isArray(patch)) {
      invalidEvent("Stack event 'update' must be a JSON string holding a JSON-Patch list.", raw);
    }
    return dialogueStackUpdated({ ...base, update });
  },
  encode: (e, d) => {
    d.update = e.update;
  },
  schema: stringFields('update'),
  apply: (e, state) => {
    state.stack = stackAfter(state.stack, e);
  },
  // Rasa Pro's story writer writes each update as a `stack:` step holding the parsed patch.
  story: (e) => ({ stack: JSON.parse(e.update) as unknown }),
  example: {
    event: 'stack',
    timestamp: 1700000000.5,
    update: '[{"op": "add", "path": "/0", "value": {"frame_id": "f1", "flow_id": "greet"}}]',
  },
});
