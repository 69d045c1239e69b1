import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';

/** `entities`: entities added to the latest user message (by policies or actions). */
export interface EntitiesAdded extends EventBase {
  readonly type: 'entities';
  readonly entities: readonly JsonObject[];
}

export function entitiesAdded(
  init: EventBaseInit & { readonly entities: readonly JsonObject[] },
): EntitiesAdded {
  return { type: 'entities', ...eventBase(init), entities: init.entities };
}
