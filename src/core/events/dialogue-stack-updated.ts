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
    const next = applyJsonPatch(state.stack, JSON.parse(e.update));
    state.stack = Array.isArray(next) ? next : [];
  },
  // Rasa Pro's story writer writes each update as a `stack:` step holding the parsed patch.
  story: (e) => ({ stack: JSON.parse(e.update) as unknown }),
  example: {
    event: 'stack',
    timestamp: 1700000000.5,
    update: '[{"op": "add", "path": "/0", "value": {"frame_id": "f1", "flow_id": "greet"}}]',
  },
});
