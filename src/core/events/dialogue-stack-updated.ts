import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
