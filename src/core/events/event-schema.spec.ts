import { EVENTS_FORMAT_ERROR_PREFIX, validateEventsPayload } from 'src/core/events/event-schema';

function messageOf(body: unknown): string {
  const result = validateEventsPayload(body);
  if (result.ok) throw new Error('expected the payload to be invalid');
  expect(result.message.startsWith(EVENTS_FORMAT_ERROR_PREFIX)).toBe(true);
  return result.message.slice(EVENTS_FORMAT_ERROR_PREFIX.length);
}

describe('validateEventsPayload', () => {
  it('wraps a single event in a list', () => {
    expect(validateEventsPayload({ event: 'slot', name: 'cuisine', value: 'italian' })).toEqual({
      ok: true,
      events: [{ event: 'slot', name: 'cuisine', value: 'italian' }],
    });
  });

  it('accepts a list of valid events of several kinds', () => {
    const result = validateEventsPayload([
      { event: 'action', name: 'action_listen', timestamp: null, metadata: null },
      {
        event: 'user',
        text: 'hi',
        parse_data: {
          intent: { name: 'greet', confidence: 1 },
          entities: [{ entity: 'name', value: 'Sara', start: 0, end: 2, role: null }],
          response_selector: { all_retrieval_intents: [] },
        },
      },
      { event: 'form', name: 'f' },
      { event: 'stack', update: '[]' },
    ]);
    expect(result.ok).toBe(true);
  });

  it('turns an absent body into [null], which is invalid', () => {
    expect(messageOf(undefined)).toBe("events[0]: null is not of type 'object'");
  });

  it('rejects an unknown event name', () => {
    expect(messageOf([{ event: 'bot' }, { event: 'nonsense' }])).toBe(
      "events[1].event: 'nonsense' is not a valid event type",
    );
  });

  it('rejects a slot event without name', () => {
    expect(messageOf({ event: 'slot', value: 1 })).toBe(
      "events[0].name: 'name' is a required property",
    );
  });

  it('rejects a parse_data.intent that is not an object', () => {
    expect(messageOf({ event: 'user', text: 'x', parse_data: { intent: 'greet' } })).toBe(
      "events[0].parse_data.intent: 'greet' is not of type 'object'",
    );
  });

  it('rejects entities that are not a list', () => {
    expect(messageOf({ event: 'entities', entities: { entity: 'a', value: 1 } })).toBe(
      'events[0].entities: {"entity":"a","value":1} is not of type \'array\'',
    );
  });

  it('rejects an entity without value and a non-integer start', () => {
    expect(messageOf({ event: 'entities', entities: [{ entity: 'a' }] })).toBe(
      "events[0].entities[0].value: 'value' is a required property",
    );
    expect(
      messageOf({ event: 'entities', entities: [{ entity: 'a', value: 1, start: 1.5 }] }),
    ).toBe("events[0].entities[0].start: 1.5 is not of type 'integer'");
  });

  it('rejects a missing event name and wrongly typed common fields', () => {
    expect(messageOf({ name: 'x' })).toBe("events[0].event: 'event' is a required property");
    expect(messageOf({ event: 'pause', timestamp: 'now' })).toBe(
      "events[0].timestamp: 'now' is not of type 'number', 'null'",
    );
    expect(messageOf({ event: 'action', name: 'a', hide_rule_turn: 'no' })).toBe(
      "events[0].hide_rule_turn: 'no' is not of type 'boolean'",
    );
  });
});
