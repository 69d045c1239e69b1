import { EVENT_CATALOGUE, EVENT_TYPES } from 'src/core/events/event-catalogue';

/**
 * Rasa's `EVENTS_SCHEMA` (rasa/shared/utils/schemas/events.py, Pro edition): the JSON schema the
 * HTTP API validates posted events against, built from the event catalogue.
 */

/** One branch of `EVENT_SCHEMA.oneOf`: `event` first, then the kind's own fields. */
function branch(
  name: string,
  fields: { readonly properties?: object; readonly required?: readonly string[] } = {},
): object {
  const properties = { event: { const: name }, ...fields.properties };
  return fields.required ? { properties, required: fields.required } : { properties };
}

function typeSchemas(): Record<string, object> {
  const schemas: Record<string, object> = {};
  for (const type of EVENT_TYPES) {
    const kind = EVENT_CATALOGUE[type];
    for (const legacy of Object.keys(kind.legacyNames ?? {})) schemas[legacy] = branch(legacy);
    schemas[type] = branch(type, kind.schema);
  }
  return schemas;
}

/** The per-type branches of `EVENT_SCHEMA.oneOf`, keyed by event name, in Rasa's order. */
export const EVENT_TYPE_SCHEMAS: Readonly<Record<string, object>> = typeSchemas();

/** Properties every event shares (the non-`oneOf` part of `EVENT_SCHEMA`). */
export const EVENT_COMMON_SCHEMA = {
  type: 'object',
  properties: {
    event: { type: 'string' },
    timestamp: { type: ['number', 'null'] },
    metadata: { type: ['object', 'null'] },
  },
  required: ['event'],
} as const;

/** Rasa's `EVENT_SCHEMA`: one event. */
export const EVENT_SCHEMA = {
  ...EVENT_COMMON_SCHEMA,
  oneOf: Object.values(EVENT_TYPE_SCHEMAS),
} as const;

/** Rasa's `EVENTS_SCHEMA`: a list of events. */
export const EVENTS_SCHEMA = { type: 'array', items: EVENT_SCHEMA } as const;
