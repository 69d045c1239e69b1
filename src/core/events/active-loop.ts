import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/**
 * `active_loop`: activates the loop (form) `name`, or deactivates the active loop when `name` is
 * null. Legacy `form` events are read as this kind and written back as `active_loop`.
 */
export interface ActiveLoop extends EventBase {
  readonly type: 'active_loop';
  readonly name: string | null;
}

export function activeLoop(init: EventBaseInit & { readonly name: string | null }): ActiveLoop {
  return { type: 'active_loop', ...eventBase(init), name: init.name };
}
