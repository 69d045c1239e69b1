import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { deserializeEvent, serializeEvent } from 'src/core/events/event-codec';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

let clock = 1000;
const ev = (raw: Record<string, unknown>): DialogueEvent =>
  deserializeEvent({ timestamp: (clock += 1), ...raw }, () => clock);
const action = (name: string): DialogueEvent => ev({ event: 'action', name });
const user = (text: string, intent = 'greet', entities: unknown[] = []): DialogueEvent =>
  ev({ event: 'user', text, parse_data: { intent: { name: intent, confidence: 1 }, entities } });

const domain = Domain.fromYaml(
  [
    'intents: [greet, inform]',
    'entities: [city]',
    'slots:',
    '  city:',
    '    type: text',
    '    mappings: []',
    '  count:',
    '    type: float',
    '    initial_value: 0.5',
    '    mappings: []',
    'forms:',
    '  restaurant_form:',
    '    required_slots: [city]',
  ].join('\n'),
);

const track = (events: DialogueEvent[]): DialogueStateTracker =>
  DialogueStateTracker.fromEvents('conv', events, domain);
const names = (events: readonly DialogueEvent[] | null): string[] | null =>
  events === null
    ? null
    : events.map((e) =>
        e.type === 'action' ? `action:${e.name}` : e.type === 'user' ? `user:${e.text}` : e.type,
      );

describe(DialogueStateTracker.name, () => {
  describe('event verbosity (the maintainers\u2019 restart example)', () => {
    const events = [
      action('action_session_start'),
      ev({ event: 'session_started' }),
      action('action_listen'),
      user('hi'),
      action('utter_greet'),
      ev({ event: 'bot', text: 'Hey' }),
      action('action_listen'),
      user('/restart', 'restart'),
      action('action_restart'),
      ev({ event: 'restart' }),
      action('action_session_start'),
      ev({ event: 'session_started' }),
      action('action_listen'),
      user('hi again'),
    ];
    const tracker = track(events);

    it('ALL returns every event', () => {
      expect(tracker.currentState(EventVerbosity.ALL).events).toHaveLength(14);
    });

    it('AFTER_RESTART returns the events after the latest restart', () => {
      expect(names(tracker.eventsForVerbosity(EventVerbosity.AFTER_RESTART))).toEqual([
        'action:action_session_start',
        'session_started',
        'action:action_listen',
        'user:hi again',
      ]);
    });

    it('APPLIED returns only the events since the latest session start', () => {
      expect(names(tracker.appliedEvents())).toEqual(['action:action_listen', 'user:hi again']);
      expect(tracker.currentState(EventVerbosity.APPLIED).events).toEqual(
        events.slice(12).map(serializeEvent),
      );
    });

    it('NONE gives events: null', () => {
      expect(tracker.currentState(EventVerbosity.NONE).events).toBeNull();
      expect(tracker.currentState().events).toBeNull();
    });
  });

  it('dumps the state with Rasa’s keys, order and values', () => {
    const tracker = new DialogueStateTracker('madeupid', domain.slots);
    expect(tracker.currentState(EventVerbosity.ALL)).toEqual({
      sender_id: 'madeupid',
      slots: { city: null, count: 0.5, requested_slot: null, session_started_metadata: null },
      latest_message: { intent: {}, entities: [], text: null, message_id: null, metadata: {} },
      latest_event_time: null,
      followup_action: 'action_listen',
      paused: false,
      stack: [],
      events: [],
      latest_input_channel: null,
      active_loop: {},
      latest_action: {},
      latest_action_name: null,
    });
    tracker.update(action('action_session_start'));
    tracker.update(ev({ event: 'session_started' }));
    tracker.update(action('action_listen'));
    const state = tracker.currentState(EventVerbosity.AFTER_RESTART);
    expect(Object.keys(state)).toEqual([
      'sender_id',
      'slots',
      'latest_message',
      'latest_event_time',
      'followup_action',
      'paused',
      'stack',
      'events',
      'latest_input_channel',
      'active_loop',
      'latest_action',
      'latest_action_name',
    ]);
    expect(state).toMatchObject({
      latest_event_time: clock,
      followup_action: null,
      latest_action: { action_name: 'action_listen' },
      latest_action_name: 'action_listen',
    });
  });

  it('sets followup_action: action_listen when new, action_session_start after restart, null after actions and users', () => {
    const tracker = new DialogueStateTracker('c', domain.slots);
    expect(tracker.followupAction).toBe('action_listen');
    tracker.update(ev({ event: 'restart' }));
    expect(tracker.followupAction).toBe('action_session_start');
    tracker.update(action('action_session_start'));
    expect(tracker.followupAction).toBeNull();
    tracker.update(ev({ event: 'followup', name: 'utter_greet' }));
    expect(tracker.followupAction).toBe('utter_greet');
    tracker.update(user('hi'));
    expect(tracker.followupAction).toBeNull();
    tracker.update(ev({ event: 'session_started' }));
    expect(tracker.followupAction).toBe('action_listen');
  });

  it('undo reverts the latest action and what it did', () => {
    const tracker = track([
      action('action_listen'),
      user('hi'),
      action('utter_greet'),
      ev({ event: 'slot', name: 'city', value: 'Berlin' }),
      ev({ event: 'undo' }),
    ]);
    expect(names(tracker.appliedEvents())).toEqual(['action:action_listen', 'user:hi']);
    expect(tracker.getSlot('city')).toBeNull();
    expect(tracker.latestActionName).toBe('action_listen');
    expect(tracker.events).toHaveLength(5);
  });

  it('rewind reverts the latest user message and the listen before it', () => {
    const tracker = track([
      action('action_listen'),
      user('hi'),
      action('utter_greet'),
      action('action_listen'),
      user('bye', 'goodbye'),
      ev({ event: 'slot', name: 'city', value: 'Paris' }),
      ev({ event: 'rewind' }),
    ]);
    expect(names(tracker.appliedEvents())).toEqual([
      'action:action_listen',
      'user:hi',
      'action:utter_greet',
    ]);
    expect(tracker.latestMessage.text).toBe('hi');
    expect(tracker.latestActionName).toBe('utter_greet');
    expect(tracker.getSlot('city')).toBeNull();
  });

  it('collapses repeated happy-path runs of an active loop in the applied events', () => {
    const tracker = track([
      action('action_listen'),
      user('book', 'request_restaurant'),
      action('restaurant_form'),
      ev({ event: 'active_loop', name: 'restaurant_form' }),
      ev({ event: 'slot', name: 'requested_slot', value: 'city' }),
      action('action_listen'),
      user('Berlin', 'inform'),
      action('restaurant_form'),
      ev({ event: 'slot', name: 'city', value: 'Berlin' }),
    ]);
    expect(names(tracker.appliedEvents())).toEqual([
      'action:action_listen',
      'user:book',
      'action:restaurant_form',
      'active_loop',
      'slot',
      'slot',
    ]);
  });

  it('keeps loop runs after a rejection (unhappy path)', () => {
    const tracker = track([
      action('action_listen'),
      user('book', 'request_restaurant'),
      action('restaurant_form'),
      ev({ event: 'active_loop', name: 'restaurant_form' }),
      action('action_listen'),
      user('what?', 'chitchat'),
      ev({ event: 'action_execution_rejected', name: 'restaurant_form' }),
      action('utter_chitchat'),
      action('restaurant_form'),
    ]);
    expect(tracker.appliedEvents()).toHaveLength(9);
  });

  it('tracks the active loop, its interruption and rejection', () => {
    const tracker = track([action('action_listen'), user('book', 'request_restaurant')]);
    tracker.update(ev({ event: 'active_loop', name: 'restaurant_form' }));
    expect(tracker.currentState().active_loop).toEqual({
      name: 'restaurant_form',
      is_interrupted: false,
      rejected: false,
      trigger_message: tracker.latestMessage.parseData,
    });
    tracker.update(ev({ event: 'loop_interrupted', is_interrupted: true }));
    expect(tracker.activeLoop?.isInterrupted).toBe(true);
    tracker.update(ev({ event: 'action_execution_rejected', name: 'restaurant_form' }));
    expect(tracker.activeLoop?.rejected).toBe(true);
    tracker.update(action('utter_chitchat'));
    expect(tracker.activeLoop).toMatchObject({ isInterrupted: false, rejected: true });
    tracker.update(action('restaurant_form'));
    expect(tracker.activeLoop?.rejected).toBe(false);
    tracker.update(ev({ event: 'active_loop', name: null }));
    expect(tracker.currentState().active_loop).toEqual({});
  });

  it('merges entities events into the latest message only right after action_listen', () => {
    const tracker = track([
      action('action_listen'),
      user('to Berlin', 'inform', [{ entity: 'city', value: 'Berlin', start: 3, end: 9 }]),
      ev({ event: 'entities', entities: [{ entity: 'city', value: 'Berlin', start: 3, end: 9 }] }),
      ev({ event: 'entities', entities: [{ entity: 'count', value: 2 }] }),
    ]);
    expect(tracker.currentState().latest_message).toMatchObject({
      text: 'to Berlin',
      entities: [
        { entity: 'city', value: 'Berlin', start: 3, end: 9 },
        { entity: 'count', value: 2 },
      ],
    });
    tracker.update(action('utter_ok'));
    tracker.update(ev({ event: 'entities', entities: [{ entity: 'late', value: 1 }] }));
    expect(tracker.latestMessageEntities).toHaveLength(2);
    // The stored user event itself is unchanged.
    expect(serializeEvent(tracker.events[1] as DialogueEvent).parse_data).toMatchObject({
      entities: [{ entity: 'city', value: 'Berlin', start: 3, end: 9 }],
    });
  });

  it('ignores slot events of unknown slots for the state but keeps them', () => {
    const tracker = track([
      ev({ event: 'slot', name: 'unknown', value: 1 }),
      ev({ event: 'slot', name: 'city', value: 'Rome' }),
    ]);
    expect(tracker.currentState().slots).toEqual({
      city: 'Rome',
      count: 0.5,
      requested_slot: null,
      session_started_metadata: null,
    });
    expect(tracker.events).toHaveLength(2);
    tracker.update(ev({ event: 'reset_slots' }));
    expect(tracker.getSlot('city')).toBeNull();
    expect(tracker.getSlot('count')).toBe(0.5);
  });

  it('pauses, resumes and remembers the latest input channel', () => {
    const tracker = track([
      ev({ event: 'user', text: 'a', parse_data: {}, input_channel: 'rest' }),
      ev({ event: 'pause' }),
    ]);
    expect(tracker.currentState()).toMatchObject({ paused: true, latest_input_channel: 'rest' });
    tracker.update(ev({ event: 'resume' }));
    expect(tracker.paused).toBe(false);
  });

  it('applies stack updates as JSON patches and resets the stack on restart', () => {
    const frame = {
      frame_id: 'f1',
      flow_id: 'transfer',
      step_id: 'START',
      frame_type: 'regular',
      type: 'flow',
    };
    const tracker = track([
      ev({ event: 'stack', update: JSON.stringify([{ op: 'add', path: '/0', value: frame }]) }),
      ev({
        event: 'stack',
        update: JSON.stringify([{ op: 'replace', path: '/0/step_id', value: 'ask' }]),
      }),
    ]);
    expect(tracker.currentState().stack).toEqual([{ ...frame, step_id: 'ask' }]);
    tracker.update(ev({ event: 'stack', update: JSON.stringify([{ op: 'remove', path: '/0' }]) }));
    expect(tracker.stack).toEqual([]);
    tracker.update(
      ev({ event: 'stack', update: JSON.stringify([{ op: 'add', path: '/-', value: frame }]) }),
    );
    tracker.update(ev({ event: 'restart' }));
    expect(tracker.stack).toEqual([]);
  });

  it('stamps model and assistant ids into metadata that lacks them', () => {
    const tracker = new DialogueStateTracker('c', domain.slots);
    tracker.modelId = 'model-1';
    tracker.assistantId = 'bot';
    tracker.update(ev({ event: 'pause', metadata: { model_id: 'kept' } }));
    expect(tracker.events[0]?.metadata).toEqual({ model_id: 'kept', assistant_id: 'bot' });
  });

  describe('travelBackInTime', () => {
    it('replays the events up to and including the time', () => {
      const events = [1, 2, 3, 4].map((t) =>
        deserializeEvent({ event: 'slot', name: 'city', value: `v${t}`, timestamp: t }, () => 0),
      );
      const tracker = track(events);
      const past = tracker.travelBackInTime(3);
      expect(past.events).toHaveLength(3);
      expect(past.getSlot('city')).toBe('v3');
      expect(tracker.events).toHaveLength(4);
    });

    it('stops at the first later event even if earlier ones follow', () => {
      const events = [1, 5, 2].map((t) =>
        deserializeEvent({ event: 'pause', timestamp: t }, () => 0),
      );
      expect(track(events).travelBackInTime(3).events).toHaveLength(1);
    });
  });
});
