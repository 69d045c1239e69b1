import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `resume`: the bot acts again after a pause. */
export interface ConversationResumed extends EventBase {
  readonly type: 'resume';
}

export function conversationResumed(init: EventBaseInit): ConversationResumed {
  return { type: 'resume', ...eventBase(init) };
}
