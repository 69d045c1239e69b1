import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `pause`: the bot stops acting (a human takes over). */
export interface ConversationPaused extends EventBase {
  readonly type: 'pause';
}

export function conversationPaused(init: EventBaseInit): ConversationPaused {
  return { type: 'pause', ...eventBase(init) };
}
