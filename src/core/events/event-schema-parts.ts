import { type EventSchemaBranch } from 'src/core/events/define-event';

/** Pieces of Rasa's `EVENTS_SCHEMA` (rasa/shared/utils/schemas/events.py) that kinds share. */

export const ENTITIES_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      start: { type: 'integer' },
      end: { type: 'integer' },
      entity: { type: 'string' },
      confidence: { type: 'number' },
      extractor: { type: ['string', 'null'] },
      value: {},
      role: { type: ['string', 'null'] },
      group: { type: ['string', 'null'] },
    },
    required: ['entity', 'value'],
  },
} as const;

export const INTENT_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, confidence: { type: 'number' } },
} as const;

export const RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    responses: {
      type: 'array',
      items: { type: 'object', properties: { text: { type: 'string' } } },
    },
    response_templates: {
      type: 'array',
      items: { type: 'object', properties: { text: { type: 'string' } } },
    },
    confidence: { type: 'number' },
    intent_response_key: { type: 'string' },
    utter_action: { type: 'string' },
    template_name: { type: 'string' },
  },
} as const;

export const RANKING_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      id: { type: 'number' },
      confidence: { type: 'number' },
      intent_response_key: { type: 'string' },
    },
  },
} as const;

/** A branch whose fields are all (optional) strings. */
export function stringFields(...fields: string[]): EventSchemaBranch {
  const properties: Record<string, unknown> = {};
  for (const field of fields) properties[field] = { type: 'string' };
  return { properties };
}
