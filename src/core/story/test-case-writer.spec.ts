import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { deserializeEvent } from 'src/core/events/event-codec';
import { externalUserUttered } from 'src/core/events/user-uttered';
import { conversationAsTestCase, writeTestCases } from 'src/core/story/test-case-writer';
import { readE2eTestCases } from 'src/core/testing/e2e-test-cases';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

let clock = 0;
const ev = (raw: Record<string, unknown>): DialogueEvent =>
  deserializeEvent({ timestamp: (clock += 1), ...raw }, () => clock);
const action = (name: string): DialogueEvent => ev({ event: 'action', name });
const user = (text: string): DialogueEvent =>
  ev({ event: 'user', text, parse_data: { intent: { name: 'x', confidence: 1 }, entities: [] } });
const utter = (name: string, text: string): DialogueEvent[] => [
  action(name),
  ev({ event: 'bot', text, metadata: { utter_action: name } }),
];
const slot = (name: string, value: unknown): DialogueEvent => ev({ event: 'slot', name, value });
const sessionStart = (): DialogueEvent[] => [
  action('action_session_start'),
  ev({ event: 'session_started' }),
  slot('carried_over', 'old'),
  action('action_listen'),
];
const trackerOf = (events: DialogueEvent[]): DialogueStateTracker =>
  DialogueStateTracker.fromEvents('c', events, Domain.empty());

describe('conversationAsTestCase', () => {
  it('writes user, utter, bot and slot_was_set steps in event order, without CALM bookkeeping', () => {
    const tracker = trackerOf([
      ...sessionStart(),
      user('fix my bike'),
      slot('flow_hashes', { book: 'abc' }),
      ev({ event: 'stack', update: '[]' }),
      ev({ event: 'flow_started', flow_id: 'book' }),
      ...utter('utter_ask_bike_type', 'What kind of bike?'),
      action('action_listen'),
      user('a city bike'),
      slot('bike_type', 'city'),
      slot('count', 2),
      ...utter('utter_ask_weekday', 'Which day?'),
      action('action_custom'),
      ev({ event: 'bot', text: 'free text' }),
      ev({ event: 'bot', text: null, data: { image: 'x' } }),
      slot('bike_type', null),
      action('action_listen'),
    ]);
    expect(conversationAsTestCase(tracker, 'repair')).toEqual({
      test_case: 'repair',
      steps: [
        { user: 'fix my bike' },
        { utter: 'utter_ask_bike_type' },
        { user: 'a city bike' },
        { slot_was_set: [{ bike_type: 'city' }, { count: 2 }] },
        { utter: 'utter_ask_weekday' },
        { bot: 'free text' },
        { slot_was_set: [{ bike_type: null }] },
      ],
    });
  });

  it('keeps only the latest session after the latest restart and skips triggered intents', () => {
    const tracker = trackerOf([
      ...sessionStart(),
      user('old session'),
      ...sessionStart(),
      user('before restart'),
      ev({ event: 'restart' }),
      ...sessionStart(),
      ...utter('utter_welcome', 'Welcome'),
      externalUserUttered({ intentName: 'remind', timestamp: (clock += 1) }),
      user('now'),
    ]);
    expect(conversationAsTestCase(tracker, 'c').steps).toEqual([
      { utter: 'utter_welcome' },
      { user: 'now' },
    ]);
  });

  it('gives no steps for an empty conversation', () => {
    expect(conversationAsTestCase(trackerOf([]), 'c')).toEqual({ test_case: 'c', steps: [] });
    expect(writeTestCases([{ test_case: 'c', steps: [] }])).toBe(
      'test_cases:\n  - test_case: c\n    steps: []\n',
    );
  });
});

describe('writeTestCases', () => {
  it('writes YAML that the e2e test reader reads back into the same steps', () => {
    const yaml = writeTestCases([
      {
        test_case: 'round trip',
        steps: [
          { user: 'say "hi": now' },
          { utter: 'utter_greet' },
          { bot: 'yes' },
          { slot_was_set: [{ flag: true }, { amount: 50.5 }, { name: 'no' }, { empty: null }] },
        ],
      },
    ]);
    expect(yaml).toContain('- user: "say \\"hi\\": now"\n');
    expect(yaml).toContain('- bot: "yes"\n');
    const [read] = readE2eTestCases(yaml, 'exported.yml').testCases;
    expect(read?.name).toBe('round trip');
    expect(read?.steps.map(({ line: _line, ...s }) => s)).toEqual([
      { kind: 'user', text: 'say "hi": now', metadata: null, assertions: [] },
      { kind: 'utter', name: 'utter_greet' },
      { kind: 'bot', text: 'yes' },
      { kind: 'slot_was_set', slot: 'flag', hasValue: true, value: true },
      { kind: 'slot_was_set', slot: 'amount', hasValue: true, value: 50.5 },
      { kind: 'slot_was_set', slot: 'name', hasValue: true, value: 'no' },
      { kind: 'slot_was_set', slot: 'empty', hasValue: true, value: null },
    ]);
  });
});
