import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { encodeEvent } from 'src/core/events/encoded-event';
import {
  EVENT_CATALOGUE,
  EVENT_NAMES,
  EVENT_TYPES,
  eventKind,
} from 'src/core/events/event-catalogue';
import { deserializeEvent, serializeEvent } from 'src/core/events/event-codec';
import { validateEventsPayload } from 'src/core/events/event-schema';
import { EVENT_SCHEMA } from 'src/core/events/events-json-schema';
import { writeTestStories } from 'src/core/story/story-writer';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

const now = (): number => 1;
const decode = (raw: Record<string, unknown>): DialogueEvent => deserializeEvent(raw, now);
/** Serialised with key order, so order differences fail. */
const ordered = (value: unknown): string => JSON.stringify(value);

/** The event names of Rasa's `EVENTS_SCHEMA` (Pro edition), in its order. */
const RASA_EVENT_NAMES = [
  'user',
  'action',
  'slot',
  'entities',
  'user_featurization',
  'cancel_reminder',
  'reminder',
  'action_execution_rejected',
  'form_validation',
  'loop_interrupted',
  'form',
  'active_loop',
  'reset_slots',
  'resume',
  'pause',
  'followup',
  'export',
  'restart',
  'undo',
  'rewind',
  'bot',
  'session_started',
  'agent',
  'flow_started',
  'flow_interrupted',
  'flow_resumed',
  'flow_completed',
  'flow_cancelled',
  'agent_started',
  'agent_completed',
  'agent_interrupted',
  'agent_resumed',
  'agent_cancelled',
  'stack',
  'routing_session_ended',
  'session_ended',
  'error',
];
const LEGACY_NAMES = ['form', 'form_validation'];

const domain = Domain.fromYaml(
  ['slots:', '  cuisine:', '    type: text', '    mappings: []'].join('\n'),
);

/** The tracker's state as JSON, without the parts every event changes (log, latest time). */
function stateOf(tracker: DialogueStateTracker): Record<string, unknown> {
  const { events: _events, latest_event_time: _time, ...state } = tracker.currentState();
  return state;
}

describe('EVENT_CATALOGUE', () => {
  it('has one entry per kind, keyed by its wire name', () => {
    expect(EVENT_TYPES).toHaveLength(35);
    for (const type of EVENT_TYPES) {
      expect(EVENT_CATALOGUE[type].type).toBe(type);
      expect(eventKind(type)).toBe(EVENT_CATALOGUE[type]);
    }
  });

  it('names the same kinds as EVENTS_SCHEMA, in Rasa’s order, legacy names included', () => {
    const schemaNames = EVENT_SCHEMA.oneOf.map(
      (branch) => (branch as { properties: { event: { const: string } } }).properties.event.const,
    );
    expect(schemaNames).toEqual(RASA_EVENT_NAMES);
    expect(EVENT_NAMES).toEqual(RASA_EVENT_NAMES);
    expect(schemaNames.filter((name) => !LEGACY_NAMES.includes(name))).toEqual(EVENT_TYPES);
  });

  describe.each(EVENT_TYPES)('%s', (type) => {
    const kind = EVENT_CATALOGUE[type];

    it('round-trips its example through deserialize and serialize, key order included', () => {
      const event = decode(kind.example);
      expect(event.type).toBe(type);
      expect(ordered(serializeEvent(event))).toBe(ordered(kind.example));
    });

    it('has an example that EVENTS_SCHEMA accepts', () => {
      expect(validateEventsPayload([kind.example])).toEqual({ ok: true, events: [kind.example] });
    });

    it(`is ${kind.story ? 'written into' : 'left out of'} test stories`, () => {
      const yaml = writeTestStories('c', [[decode(kind.example)]]);
      if (kind.story) expect(yaml).toMatch(/steps:\n *- /);
      else expect(yaml).toContain('steps: []');
    });

    if (!kind.apply) {
      it('leaves the tracker state alone (it has no apply)', () => {
        const tracker = DialogueStateTracker.fromEvents(
          'c',
          [
            decode({ event: 'slot', name: 'cuisine', value: 'thai' }),
            decode({ event: 'action', name: 'action_listen' }),
          ],
          domain,
        );
        const before = stateOf(tracker);
        tracker.update(decode(kind.example));
        expect(stateOf(tracker)).toEqual(before);
      });
    }

    it(`files ${kind.storeColumn ?? 'no'} column for the event store`, () => {
      const encoded = encodeEvent(decode(kind.example));
      expect(encoded.intent !== null).toBe(kind.storeColumn === 'intent');
      expect(encoded.action !== null).toBe(kind.storeColumn === 'action');
      expect(encoded.json).toBe(ordered(kind.example));
    });
  });

  describe('an entry is what the codec, the tracker and the story writer call', () => {
    afterEach(() => jest.restoreAllMocks());

    it('serialises, applies and writes a slot event through the slot entry', () => {
      const kind = EVENT_CATALOGUE.slot as Required<typeof EVENT_CATALOGUE.slot>;
      const encode = jest.spyOn(kind, 'encode');
      const apply = jest.spyOn(kind, 'apply');
      const story = jest.spyOn(kind, 'story');
      const event = decode({ event: 'slot', name: 'cuisine', value: 'thai' });

      serializeEvent(event);
      expect(encode).toHaveBeenCalledWith(event, expect.objectContaining({ event: 'slot' }));

      const tracker = new DialogueStateTracker('c', domain.slots);
      tracker.update(event);
      expect(apply).toHaveBeenCalledWith(event, expect.anything());
      expect(tracker.getSlot('cuisine')).toBe('thai');

      expect(writeTestStories('c', [[event]])).toContain('  - slot_was_set:\n    - cuisine: thai');
      expect(story).toHaveBeenCalledWith(event, expect.anything());
    });

    it('replays the applied events through their entries on undo', () => {
      const kind = EVENT_CATALOGUE.slot as Required<typeof EVENT_CATALOGUE.slot>;
      const tracker = new DialogueStateTracker('c', domain.slots);
      tracker.update(decode({ event: 'slot', name: 'cuisine', value: 'thai' }));
      tracker.update(decode({ event: 'action', name: 'utter_ok' }));
      const apply = jest.spyOn(kind, 'apply');
      tracker.update(decode({ event: 'undo' }));
      expect(apply).toHaveBeenCalledTimes(1);
      expect(tracker.currentState(EventVerbosity.APPLIED)).toMatchObject({
        slots: { cuisine: 'thai' },
        latest_action_name: null,
      });
    });
  });
});
