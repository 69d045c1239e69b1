import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `rewind`: everything since before the latest user message is reverted. */
export interface UserUtteranceReverted extends EventBase {
  readonly type: 'rewind';
}

export function userUtteranceReverted(init: EventBaseInit): UserUtteranceReverted {
  return { type: 'rewind', ...eventBase(init) };
}
