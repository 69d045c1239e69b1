/**
 * Rasa's `EVENTS_SCHEMA` (rasa/shared/utils/schemas/events.py, Pro edition): the JSON schema the
 * HTTP API validates posted events against.
 */

const ENTITIES_SCHEMA = {
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

const INTENT = {
  type: 'object',
  properties: { name: { type: 'string' }, confidence: { type: 'number' } },
} as const;

const RESPONSE_SCHEMA = {
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

const RANKING_SCHEMA = {
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

const USER_UTTERED = {
  properties: {
    event: { const: 'user' },
    text: { type: ['string', 'null'] },
    input_channel: { type: ['string', 'null'] },
    message_id: { type: ['string', 'null'] },
    parse_data: {
      type: 'object',
      properties: {
        text: { type: ['string', 'null'] },
        intent_ranking: { type: 'array', items: INTENT },
        intent: INTENT,
        entities: ENTITIES_SCHEMA,
        response_selector: {
          type: 'object',
          oneOf: [
            { properties: { all_retrieval_intents: { type: 'array' } } },
            {
              patternProperties: {
                '[\\w/]': {
                  type: 'object',
                  properties: { response: RESPONSE_SCHEMA, ranking: RANKING_SCHEMA },
                },
              },
            },
          ],
        },
      },
    },
  },
} as const;

const ACTION_EXECUTED = {
  properties: {
    event: { const: 'action' },
    policy: { type: ['string', 'null'] },
    confidence: { type: ['number', 'null'] },
    name: { type: ['string', 'null'] },
    hide_rule_turn: { type: 'boolean' },
    action_text: { type: ['string', 'null'] },
  },
} as const;

const SLOT_SET = {
  properties: { event: { const: 'slot' }, name: { type: 'string' }, value: {} },
  required: ['name', 'value'],
} as const;

const ENTITIES_ADDED = {
  properties: { event: { const: 'entities' }, entities: ENTITIES_SCHEMA },
  required: ['entities'],
} as const;

function only(name: string): { properties: Record<string, unknown> } {
  return { properties: { event: { const: name } } };
}

function withStrings(name: string, ...fields: string[]): { properties: Record<string, unknown> } {
  const properties: Record<string, unknown> = { event: { const: name } };
  for (const field of fields) properties[field] = { type: 'string' };
  return { properties };
}

/** The per-type branches of `EVENT_SCHEMA.oneOf`, keyed by event name, in Rasa's order. */
export const EVENT_TYPE_SCHEMAS: Readonly<Record<string, object>> = {
  user: USER_UTTERED,
  action: ACTION_EXECUTED,
  slot: SLOT_SET,
  entities: ENTITIES_ADDED,
  user_featurization: only('user_featurization'),
  cancel_reminder: only('cancel_reminder'),
  reminder: only('reminder'),
  action_execution_rejected: only('action_execution_rejected'),
  form_validation: only('form_validation'),
  loop_interrupted: only('loop_interrupted'),
  form: only('form'),
  active_loop: only('active_loop'),
  reset_slots: only('reset_slots'),
  resume: only('resume'),
  pause: only('pause'),
  followup: only('followup'),
  export: only('export'),
  restart: only('restart'),
  undo: only('undo'),
  rewind: only('rewind'),
  bot: only('bot'),
  session_started: only('session_started'),
  agent: only('agent'),
  flow_started: withStrings('flow_started', 'flow_id'),
  flow_interrupted: withStrings('flow_interrupted', 'flow_id', 'step_id'),
  flow_resumed: withStrings('flow_resumed', 'flow_id', 'step_id'),
  flow_completed: withStrings('flow_completed', 'flow_id', 'step_id'),
  flow_cancelled: withStrings('flow_cancelled', 'flow_id', 'step_id'),
  agent_started: withStrings('agent_started', 'agent_id', 'flow_id'),
  agent_completed: withStrings('agent_completed', 'agent_id', 'flow_id', 'status'),
  agent_interrupted: withStrings('agent_interrupted', 'agent_id', 'flow_id'),
  agent_resumed: withStrings('agent_resumed', 'agent_id', 'flow_id'),
  agent_cancelled: withStrings('agent_cancelled', 'agent_id', 'flow_id', 'reason'),
  stack: withStrings('stack', 'update'),
  routing_session_ended: only('routing_session_ended'),
  session_ended: only('session_ended'),
  error: only('error'),
};

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
