import { DialogueError } from 'src/core/errors/dialogue-error';
import { deserializeEvent, serializeEvent } from 'src/core/events/event-codec';

const now = (): number => 1700000000.5;
const T = 1700000000.123;

/** Canonical wire events as Rasa's `as_dict()` writes them, one or more per kind. */
const CANONICAL: Record<string, Record<string, unknown>[]> = {
  user: [
    {
      event: 'user',
      timestamp: T,
      text: 'hello Berlin',
      parse_data: {
        intent: { name: 'greet', confidence: 0.9 },
        entities: [{ entity: 'city', value: 'Berlin', start: 6, end: 12 }],
        text: 'hello Berlin',
        message_id: 'm1',
        metadata: {},
        intent_ranking: [{ name: 'greet', confidence: 0.9 }],
        response_selector: { all_retrieval_intents: [] },
        commands: [],
      },
      input_channel: 'rest',
      message_id: 'm1',
      metadata: {},
    },
    {
      event: 'user',
      timestamp: T,
      metadata: { model_id: 'abc', assistant_id: 'x' },
      text: '/greet',
      parse_data: {
        intent: { name: 'greet', confidence: 1.0 },
        entities: [],
        text: '/greet',
        message_id: null,
        metadata: {},
      },
      input_channel: null,
      message_id: null,
    },
  ],
  user_featurization: [
    { event: 'user_featurization', timestamp: T, use_text_for_featurization: true },
  ],
  entities: [
    {
      event: 'entities',
      timestamp: T,
      entities: [{ entity: 'city', value: 'Paris', extractor: 'TEDPolicy' }],
    },
  ],
  bot: [
    {
      event: 'bot',
      timestamp: T,
      metadata: { utter_action: 'utter_greet' },
      text: 'Hey! How are you?',
      data: {
        elements: null,
        quick_replies: null,
        buttons: [{ title: 'great', payload: '/mood_great' }],
        attachment: null,
        image: null,
        custom: null,
      },
    },
    { event: 'bot', timestamp: T, text: 'hi', data: {}, metadata: {} },
  ],
  slot: [
    { event: 'slot', timestamp: T, name: 'cuisine', value: 'italian' },
    { event: 'slot', timestamp: T, metadata: { model_id: 'm' }, name: 'n', value: [1, 2] },
    { event: 'slot', timestamp: T, name: 'n', value: null },
  ],
  reset_slots: [{ event: 'reset_slots', timestamp: T }],
  restart: [{ event: 'restart', timestamp: T }],
  rewind: [{ event: 'rewind', timestamp: T }],
  undo: [{ event: 'undo', timestamp: T }],
  session_started: [{ event: 'session_started', timestamp: T, metadata: { model_id: 'm' } }],
  action: [
    {
      event: 'action',
      timestamp: T,
      name: 'action_session_start',
      policy: null,
      confidence: 1.0,
      action_text: null,
      hide_rule_turn: false,
    },
    {
      event: 'action',
      timestamp: T,
      metadata: { model_id: 'm' },
      name: null,
      policy: 'TEDPolicy',
      confidence: 0.7,
      action_text: 'Hi there',
      hide_rule_turn: true,
    },
  ],
  action_execution_rejected: [
    {
      event: 'action_execution_rejected',
      timestamp: T,
      name: 'restaurant_form',
      policy: null,
      confidence: null,
    },
  ],
  active_loop: [
    { event: 'active_loop', timestamp: T, name: 'restaurant_form' },
    { event: 'active_loop', timestamp: T, name: null },
  ],
  loop_interrupted: [{ event: 'loop_interrupted', timestamp: T, is_interrupted: true }],
  followup: [{ event: 'followup', timestamp: T, name: 'utter_greet' }],
  pause: [{ event: 'pause', timestamp: T }],
  resume: [{ event: 'resume', timestamp: T }],
  reminder: [
    {
      event: 'reminder',
      timestamp: T,
      intent: 'remind',
      date_time: '2018-09-03T11:41:10.128172+00:00',
      entities: null,
      name: 'my_reminder',
      kill_on_user_msg: true,
    },
  ],
  cancel_reminder: [{ event: 'cancel_reminder', timestamp: T }],
  export: [{ event: 'export', timestamp: T }],
  agent: [{ event: 'agent', timestamp: T, text: 'a human here', data: { x: 1 } }],
  stack: [
    {
      event: 'stack',
      timestamp: T,
      update: '[{"op": "add", "path": "/0", "value": {"frame_id": "f1", "flow_id": "greet"}}]',
    },
  ],
  flow_started: [{ event: 'flow_started', timestamp: T, flow_id: 'transfer' }],
  flow_interrupted: [{ event: 'flow_interrupted', timestamp: T, flow_id: 'f', step_id: 's' }],
  flow_resumed: [{ event: 'flow_resumed', timestamp: T, flow_id: 'f', step_id: 's' }],
  flow_completed: [{ event: 'flow_completed', timestamp: T, flow_id: 'f', step_id: 's' }],
  flow_cancelled: [{ event: 'flow_cancelled', timestamp: T, flow_id: 'f', step_id: 's' }],
  agent_started: [{ event: 'agent_started', timestamp: T, agent_id: 'a', flow_id: 'f' }],
  agent_completed: [
    { event: 'agent_completed', timestamp: T, agent_id: 'a', flow_id: 'f', status: 'done' },
  ],
  agent_interrupted: [{ event: 'agent_interrupted', timestamp: T, agent_id: 'a', flow_id: 'f' }],
  agent_resumed: [{ event: 'agent_resumed', timestamp: T, agent_id: 'a', flow_id: 'f' }],
  agent_cancelled: [
    { event: 'agent_cancelled', timestamp: T, agent_id: 'a', flow_id: 'f', reason: 'user' },
  ],
  routing_session_ended: [{ event: 'routing_session_ended', timestamp: T }],
  session_ended: [{ event: 'session_ended', timestamp: T, metadata: { reason: 'timeout' } }],
  error: [{ event: 'error', timestamp: T, error_type: 'rasa_internal_error', info: {} }],
};

/** Serialised with key order, so order differences fail. */
const ordered = (value: unknown): string => JSON.stringify(value);

describe('event codec', () => {
  it('covers every Rasa 3.x and Rasa Pro event kind', () => {
    expect(Object.keys(CANONICAL)).toHaveLength(35);
  });

  for (const [kind, examples] of Object.entries(CANONICAL)) {
    it(`round-trips canonical '${kind}' events exactly, key order included`, () => {
      for (const raw of examples) {
        const event = deserializeEvent(raw, now);
        expect(event.type).toBe(kind);
        expect(ordered(serializeEvent(event))).toBe(ordered(raw));
      }
    });
  }

  it('puts the metadata of user and bot events last when it is empty', () => {
    const user = serializeEvent(
      deserializeEvent({ event: 'user', text: 'hi', parse_data: {}, timestamp: T }, now),
    );
    expect(Object.keys(user)).toEqual([
      'event',
      'timestamp',
      'text',
      'parse_data',
      'input_channel',
      'message_id',
      'metadata',
    ]);
    expect(user.parse_data).toEqual({
      intent: {},
      entities: [],
      text: 'hi',
      message_id: null,
      metadata: {},
    });
    const bot = serializeEvent(deserializeEvent({ event: 'bot', text: 'x', timestamp: T }, now));
    expect(Object.keys(bot)).toEqual(['event', 'timestamp', 'text', 'data', 'metadata']);
  });

  it('omits empty metadata of other events and keeps non-empty metadata third', () => {
    const a = serializeEvent(deserializeEvent({ event: 'action', name: 'x', metadata: {} }, now));
    expect(Object.keys(a)).toEqual([
      'event',
      'timestamp',
      'name',
      'policy',
      'confidence',
      'action_text',
      'hide_rule_turn',
    ]);
    const b = serializeEvent(deserializeEvent({ event: 'restart', metadata: { k: 1 } }, now));
    expect(Object.keys(b)).toEqual(['event', 'timestamp', 'metadata']);
  });

  it.each([undefined, null, 0])('sets a timestamp of %p to now()', (timestamp) => {
    const event = deserializeEvent({ event: 'pause', timestamp }, now);
    expect(event.timestamp).toBe(1700000000.5);
  });

  it('drops unknown fields and the unserialised fields of cancel_reminder and export', () => {
    expect(
      serializeEvent(
        deserializeEvent({ event: 'slot', name: 'a', value: 1, extra: 2, timestamp: T }, now),
      ),
    ).toEqual({
      event: 'slot',
      timestamp: T,
      name: 'a',
      value: 1,
    });
    const cancel = deserializeEvent(
      { event: 'cancel_reminder', name: 'r', intent: 'i', timestamp: T },
      now,
    );
    expect(cancel).toMatchObject({ type: 'cancel_reminder', name: 'r', intent: 'i' });
    expect(serializeEvent(cancel)).toEqual({ event: 'cancel_reminder', timestamp: T });
    const exported = deserializeEvent({ event: 'export', path: 'stories.yml', timestamp: T }, now);
    expect(serializeEvent(exported)).toEqual({ event: 'export', timestamp: T });
  });

  it('reads a legacy form event as active_loop and writes it back as active_loop', () => {
    const event = deserializeEvent({ event: 'form', name: 'restaurant_form', timestamp: T }, now);
    expect(event).toMatchObject({ type: 'active_loop', name: 'restaurant_form' });
    expect(serializeEvent(event)).toEqual({
      event: 'active_loop',
      timestamp: T,
      name: 'restaurant_form',
    });
  });

  it.each([
    [true, false],
    [false, true],
    [undefined, false],
  ])(
    'reads form_validation {validate: %p} as loop_interrupted {is_interrupted: %p}',
    (validate, interrupted) => {
      const event = deserializeEvent({ event: 'form_validation', validate, timestamp: T }, now);
      expect(serializeEvent(event)).toEqual({
        event: 'loop_interrupted',
        timestamp: T,
        is_interrupted: interrupted,
      });
    },
  );

  it('rejects an action event without name and action_text', () => {
    expect(() => deserializeEvent({ event: 'action', timestamp: T }, now)).toThrow(DialogueError);
    try {
      deserializeEvent({ event: 'action' }, now);
    } catch (e) {
      expect((e as DialogueError).code).toBe('EVENTS.INVALID');
    }
  });

  it.each([
    [{ event: 'nonsense' }],
    [{ event: 'slot', value: 1 }],
    [{ event: 'reminder', intent: 'x' }],
    [{ event: 'reminder', intent: 'x', date_time: 'not a date' }],
    [{ event: 'stack', update: 'not json' }],
    [{ event: 'bot', data: [1] }],
  ])('rejects %j with EVENTS.INVALID', (raw) => {
    expect(() => deserializeEvent(raw, now)).toThrow(
      expect.objectContaining({ code: 'EVENTS.INVALID' }),
    );
  });

  it('gives a reminder without name a generated one and writes Z dates as +00:00', () => {
    const event = deserializeEvent(
      { event: 'reminder', intent: 'x', date_time: '2024-01-01T10:00:00Z', timestamp: T },
      now,
      () => 'generated-id',
    );
    expect(serializeEvent(event)).toEqual({
      event: 'reminder',
      timestamp: T,
      intent: 'x',
      date_time: '2024-01-01T10:00:00+00:00',
      entities: null,
      name: 'generated-id',
      kill_on_user_msg: true,
    });
  });

  it('accepts a user event without parse_data (Rasa would fail) and derives the parse data', () => {
    const event = deserializeEvent({ event: 'user', text: 'hi', timestamp: T }, now);
    expect(event).toMatchObject({ type: 'user', text: 'hi', useTextForFeaturization: true });
  });
});
