import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalString } from 'src/core/events/json-values';

/** `followup`: the named action must run next. */
export interface FollowupAction extends EventBase {
  readonly type: 'followup';
  readonly name: string | null;
}

export function followupAction(
  init: EventBaseInit & { readonly name: string | null },
): FollowupAction {
  return { type: 'followup', ...eventBase(init), name: init.name };
}

export const FOLLOWUP_ACTION_KIND = defineEvent<FollowupAction>({
  type: 'followup',
  decode: (raw, base) => followupAction({ ...base, name: optionalString(raw.name) }),
  encode: (e, d) => {
    d.name = e.name;
  },
  apply: (e, state) => {
    state.followup = e.name;
  },
  example: { event: 'followup', timestamp: 1700000000.5, name: 'utter_greet' },
});
