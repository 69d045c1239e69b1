import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
