import {
  expectMatchesOpenApi,
  OPENAPI_OVERRIDES,
  openApiResponses,
  openApiSchemaFor,
  openApiValidator,
} from 'test/compat/openapi';

// Self-test of the OpenAPI response validator (test/compat/openapi.ts): no server needed.

const TRACKER = '/conversations/{conversation_id}/tracker';
const META = { model_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', assistant_id: 'test_assistant' };

/** A tracker as Rasa 3.x sends it (rasa-http-api.md §5.5/§8), built by hand from the Tracker schema. */
function rasaTracker(): Record<string, unknown> {
  const parseData = {
    intent: { name: 'greet', confidence: 0.97 },
    entities: [{ entity: 'name', start: 11, end: 15, value: 'Sara', extractor: 'DIETClassifier' }],
    text: 'hello I am Sara',
    message_id: '9f6c1b2a',
    metadata: {},
    intent_ranking: [
      { name: 'greet', confidence: 0.97 },
      { name: 'goodbye', confidence: 0.03 },
    ],
  };
  return {
    sender_id: 'default',
    slots: { name: 'Sara', requested_slot: null, session_started_metadata: null },
    latest_message: parseData,
    latest_event_time: 1700000003.5,
    followup_action: null,
    paused: false,
    events: [
      {
        event: 'action',
        timestamp: 1700000000.1,
        metadata: META,
        name: 'action_session_start',
        policy: null,
        confidence: 1.0,
        action_text: null,
        hide_rule_turn: false,
      },
      { event: 'session_started', timestamp: 1700000000.2, metadata: META },
      {
        event: 'action',
        timestamp: 1700000000.3,
        metadata: META,
        name: 'action_listen',
        policy: null,
        confidence: null,
        action_text: null,
        hide_rule_turn: false,
      },
      {
        event: 'user',
        timestamp: 1700000001,
        metadata: META,
        text: 'hello I am Sara',
        parse_data: parseData,
        input_channel: 'rest',
        message_id: '9f6c1b2a',
      },
      { event: 'slot', timestamp: 1700000002, metadata: META, name: 'name', value: 'Sara' },
      {
        event: 'action',
        timestamp: 1700000003,
        metadata: META,
        name: 'utter_greet',
        policy: 'RulePolicy',
        confidence: 1.0,
        action_text: null,
        hide_rule_turn: false,
      },
      {
        event: 'bot',
        timestamp: 1700000003.5,
        metadata: { utter_action: 'utter_greet', ...META },
        text: 'Hey! How are you?',
        data: { elements: null, quick_replies: null, buttons: null, attachment: null, image: null },
      },
    ],
    latest_input_channel: 'rest',
    active_loop: {},
    latest_action: { action_name: 'utter_greet' },
    latest_action_name: 'utter_greet',
  };
}

/** GET tracker of an unknown id, include_events=NONE (§5.5, §8): nulls and empty objects. */
function freshTrackerWithoutEvents(): Record<string, unknown> {
  return {
    sender_id: 'madeupid',
    slots: { name: null, requested_slot: null, session_started_metadata: null },
    latest_message: { intent: {}, entities: [], text: null, message_id: null, metadata: {} },
    latest_event_time: 1700000000.123,
    followup_action: null,
    paused: false,
    events: null,
    latest_input_channel: null,
    active_loop: {},
    latest_action: { action_name: 'action_listen' },
    latest_action_name: 'action_listen',
  };
}

describe('expectMatchesOpenApi', () => {
  it('accepts a correct Rasa tracker for GET, POST and PUT tracker routes', () => {
    expect(() => expectMatchesOpenApi('get', TRACKER, 200, rasaTracker())).not.toThrow();
    expect(() =>
      expectMatchesOpenApi('post', `${TRACKER}/events`, 200, rasaTracker()),
    ).not.toThrow();
    expect(() =>
      expectMatchesOpenApi('put', `${TRACKER}/events`, 200, rasaTracker()),
    ).not.toThrow();
  });

  it('accepts the real nulls the spec forgot: events NONE, empty latest_message, no channel', () => {
    expect(() =>
      expectMatchesOpenApi('get', TRACKER, 200, freshTrackerWithoutEvents()),
    ).not.toThrow();
  });

  it('rejects a tracker whose paused flag is not a boolean', () => {
    const body = { ...rasaTracker(), paused: 'no' };
    expect(() => expectMatchesOpenApi('get', TRACKER, 200, body)).toThrow(
      /\/paused must be boolean/,
    );
  });

  it('rejects an unknown event type inside events', () => {
    const body = { ...rasaTracker(), events: [{ event: 'nope', timestamp: 1 }] };
    expect(() => expectMatchesOpenApi('get', TRACKER, 200, body)).toThrow(
      /\/events\/0\/event must be equal to one of the allowed values/,
    );
  });

  it('rejects a tracker that uses the spec name conversation_id instead of sender_id', () => {
    const { sender_id: id, ...rest } = rasaTracker();
    const body = { conversation_id: id, ...rest };
    expect(() => expectMatchesOpenApi('get', TRACKER, 200, body)).toThrow(
      /must have required property 'sender_id'/,
    );
  });

  it('accepts events: [] but rejects a non-array events value', () => {
    // events: [] is legitimate (e.g. PUT []) — only a non-array, non-null value is wrong.
    expect(() =>
      expectMatchesOpenApi('get', TRACKER, 200, { ...freshTrackerWithoutEvents(), events: [] }),
    ).not.toThrow();
    expect(() =>
      expectMatchesOpenApi('get', TRACKER, 200, { ...freshTrackerWithoutEvents(), events: {} }),
    ).toThrow(/\/events must be array/);
  });

  it('validates Rasa error bodies, including help: null', () => {
    const error = {
      version: '3.6.20',
      status: 'failure',
      message: 'User is not authenticated.',
      reason: 'NotAuthenticated',
      details: {},
      help: null,
      code: 401,
    };
    expect(() => expectMatchesOpenApi('get', TRACKER, 401, error)).not.toThrow();
    expect(() =>
      expectMatchesOpenApi('get', TRACKER, 401, { ...error, status: 'ServerError' }),
    ).toThrow(/\/status must be equal to one of the allowed values/);
  });

  it('throws when the spec documents no schema for the response', () => {
    expect(() => expectMatchesOpenApi('get', TRACKER, 404, {})).toThrow(
      /documents no 404 response/,
    );
    expect(() => expectMatchesOpenApi('put', '/model', 204, undefined)).toThrow(
      /defines no response body/,
    );
    expect(() =>
      expectMatchesOpenApi('get', '/conversations/{conversation_id}/story', 200, '', 'text/yml'),
    ).toThrow(/gives no schema/);
    expect(() => expectMatchesOpenApi('get', '/conversations/{id}/tracker', 200, {})).toThrow(
      /has no path/,
    );
    expect(() => expectMatchesOpenApi('get', '/domain', 200, {}, 'text/html')).toThrow(
      /has no "text\/html" body/,
    );
  });

  it('ignores content-type parameters such as charset', () => {
    expect(() =>
      expectMatchesOpenApi('get', '/', 200, 'Hello from Rasa: 3.6.20', 'text/plain; charset=utf-8'),
    ).not.toThrow();
  });
});

describe('openApiSchemaFor', () => {
  it('returns the response schema, resolving response-level $refs', () => {
    expect(openApiSchemaFor('get', TRACKER, 200)).toEqual({ $ref: '#/components/schemas/Tracker' });
  });

  it('compiles every response schema the spec documents', () => {
    const responses = openApiResponses();
    expect(responses.length).toBeGreaterThan(50);
    for (const r of responses) {
      expect(() =>
        openApiValidator(r.method, r.pathTemplate, r.status, r.contentType),
      ).not.toThrow();
    }
  });

  it('documents every override with a reason', () => {
    for (const override of OPENAPI_OVERRIDES) expect(override.why.length).toBeGreaterThan(20);
  });
});
