import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `resume`: the bot acts again after a pause. */
export interface ConversationResumed extends EventBase {
  readonly type: 'resume';
}

export function conversationResumed(init: EventBaseInit): ConversationResumed {
  return { type: 'resume', ...eventBase(init) };
}

export const CONVERSATION_RESUMED_KIND = defineEvent<ConversationResumed>({
  type: 'resume',
  decode: (_raw, base) => conversationResumed(base),
  apply: (_e, state) => {
    state.paused = false;
  },
  example: { event: 'resume', timestamp: 1700000000.5 },
});
