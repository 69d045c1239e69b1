import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { ENTITIES_SCHEMA } from 'src/core/events/event-schema-parts';
import { jsonEqual } from 'src/core/events/json-values';
import { entityList } from 'src/core/events/wire-fields';

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

export const ENTITIES_ADDED_KIND = defineEvent<EntitiesAdded>({
  type: 'entities',
  decode: (raw, base) =>
    entitiesAdded({ ...base, entities: entityList(raw.entities, "'entities'", raw) }),
  encode: (e, d) => {
    d.entities = e.entities;
  },
  schema: { properties: { entities: ENTITIES_SCHEMA }, required: ['entities'] },
  apply: (e, state) => {
    // They belong to the latest user message, which is always right after action_listen.
    if (state.latestActionName !== ACTION_LISTEN_NAME) return;
    for (const entity of e.entities) {
      if (!state.latestUserEntities.some((known) => jsonEqual(known, entity))) {
        state.latestUserEntities = [...state.latestUserEntities, entity];
      }
    }
  },
  example: {
    event: 'entities',
    timestamp: 1700000000.5,
    entities: [{ entity: 'city', value: 'Paris', extractor: 'TEDPolicy' }],
  },
});
