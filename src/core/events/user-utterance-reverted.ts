import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `rewind`: everything since before the latest user message is reverted. */
export interface UserUtteranceReverted extends EventBase {
  readonly type: 'rewind';
}

export function userUtteranceReverted(init: EventBaseInit): UserUtteranceReverted {
  return { type: 'rewind', ...eventBase(init) };
}

export const USER_UTTERANCE_REVERTED_KIND = defineEvent<UserUtteranceReverted>({
  type: 'rewind',
  decode: (_raw, base) => userUtteranceReverted(base),
  apply: (_e, state) => {
    state.reset();
    state.replayAppliedEvents();
  },
  example: { event: 'rewind', timestamp: 1700000000.5 },
});
