import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `pause`: the bot stops acting (a human takes over). */
export interface ConversationPaused extends EventBase {
  readonly type: 'pause';
}

export function conversationPaused(init: EventBaseInit): ConversationPaused {
  return { type: 'pause', ...eventBase(init) };
}

export const CONVERSATION_PAUSED_KIND = defineEvent<ConversationPaused>({
  type: 'pause',
  decode: (_raw, base) => conversationPaused(base),
  apply: (_e, state) => {
    state.paused = true;
  },
  example: { event: 'pause', timestamp: 1700000000.5 },
});
