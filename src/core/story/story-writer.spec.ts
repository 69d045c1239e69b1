import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { deserializeEvent } from 'src/core/events/event-codec';
import { externalUserUttered } from 'src/core/events/user-uttered';
import { formatMessage } from 'src/core/story/message-annotation';
import { writeTestStories } from 'src/core/story/story-writer';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { splitSessions } from 'src/core/tracker/sessions';

let clock = 0;
const ev = (raw: Record<string, unknown>): DialogueEvent =>
  deserializeEvent({ timestamp: (clock += 1), ...raw }, () => clock);
const action = (name: string): DialogueEvent => ev({ event: 'action', name });
const user = (text: string, intent: string, entities: unknown[] = []): DialogueEvent =>
  ev({ event: 'user', text, parse_data: { intent: { name: intent, confidence: 1 }, entities } });
const sessionStart = (): DialogueEvent[] => [
  action('action_session_start'),
  ev({ event: 'session_started' }),
  action('action_listen'),
];

describe('writeTestStories', () => {
  it('writes one session as one story in Rasa’s layout', () => {
    const events = [
      ...sessionStart(),
      user('hi', 'greet'),
      action('utter_greet'),
      ev({ event: 'bot', text: 'Hey' }),
      ev({ event: 'slot', name: 'requested_slot', value: 'some value' }),
      ev({ event: 'active_loop', name: 'restaurant_form' }),
      action('action_unlikely_intent'),
      action('action_listen'),
    ];
    expect(writeTestStories('some-conversation-ID', [events])).toBe(
      [
        'version: "3.1"',
        'stories:',
        '- story: some-conversation-ID',
        '  steps:',
        '  - intent: greet',
        '    user: |-',
        '      hi',
        '  - action: utter_greet',
        '  - slot_was_set:',
        '    - requested_slot: some value',
        '  - active_loop: restaurant_form',
        '',
      ].join('\n'),
    );
  });

  it('names the stories "<id>, story <n>" when there are several sessions', () => {
    const events = [
      ...sessionStart(),
      user('hi', 'greet'),
      ...sessionStart(),
      user('bye', 'goodbye'),
    ];
    const yaml = writeTestStories('conv', splitSessions(events));
    expect(yaml).toContain('- story: conv, story 1\n');
    expect(yaml).toContain('- story: conv, story 2\n');
    expect(yaml.indexOf('hi')).toBeLessThan(yaml.indexOf('story 2'));
    expect(yaml.indexOf('bye')).toBeGreaterThan(yaml.indexOf('story 2'));
  });

  it('keeps only the first session when time-travelled to its end', () => {
    const domain = Domain.empty();
    const events = [
      ...sessionStart(),
      user('hi', 'greet'),
      ...sessionStart(),
      user('bye', 'goodbye'),
    ];
    const until = events[3]?.timestamp ?? 0;
    const sessions = splitSessions(events)
      .map((s) => [
        ...DialogueStateTracker.fromEvents('conv', s, domain).travelBackInTime(until).events,
      ])
      .filter((s) => s.length > 0);
    const yaml = writeTestStories('conv', sessions);
    expect(yaml).toContain('- story: conv\n');
    expect(yaml).toContain('hi');
    expect(yaml).not.toContain('bye');
  });

  it('writes only the version for no sessions and steps: [] for an empty session', () => {
    expect(writeTestStories('conv', [])).toBe('version: "3.1"\n');
    expect(writeTestStories('new-id', [[]])).toBe(
      'version: "3.1"\nstories:\n- story: new-id\n  steps: []\n',
    );
    expect(writeTestStories('conv', [sessionStart()])).toBe(
      'version: "3.1"\nstories:\n- story: conv\n  steps: []\n',
    );
  });

  it('keeps action_restart and splits a restarted conversation into two stories', () => {
    const events = [
      ...sessionStart(),
      user('hi', 'greet'),
      action('utter_greet'),
      action('action_listen'),
      user('/restart', 'restart'),
      action('action_restart'),
      ev({ event: 'restart' }),
      ...sessionStart(),
      user('hi again', 'greet'),
    ];
    const yaml = writeTestStories('conv', splitSessions(events));
    const [first, second] = yaml.split('- story: conv, story 2');
    expect(first).toContain(
      '  - intent: restart\n    user: |-\n      /restart\n  - action: action_restart\n',
    );
    expect(second).toContain('hi again');
    expect(second).not.toContain('restart');
  });

  it('annotates entities inline and writes triggered intents and end-to-end actions', () => {
    const events = [
      action('action_listen'),
      user('fly from Berlin to Paris', 'inform', [
        { entity: 'city', value: 'Berlin', start: 9, end: 15, role: 'from' },
        { entity: 'city', value: 'Paris', start: 19, end: 24 },
      ]),
      ev({ event: 'action', name: null, action_text: 'Booked!' }),
      externalUserUttered({ intentName: 'remind', timestamp: (clock += 1) }),
      ev({ event: 'slot', name: 'list', value: [1, 2] }),
      ev({ event: 'active_loop', name: null }),
    ];
    expect(writeTestStories('c', [events])).toBe(
      [
        'version: "3.1"',
        'stories:',
        '- story: c',
        '  steps:',
        '  - intent: inform',
        '    user: |-',
        '      fly from [Berlin]{"entity": "city", "role": "from"} to [Paris](city)',
        '  - bot: Booked!',
        '  - intent: remind',
        '    user: |-',
        '      EXTERNAL: remind',
        '  - slot_was_set:',
        '    - list:',
        '      - 1',
        '      - 2',
        '  - active_loop: null',
        '',
      ].join('\n'),
    );
  });

  it('adds entities of entities events and drops the intent of text-featurised turns', () => {
    const events = [
      action('action_listen'),
      user('to Rome', 'inform'),
      ev({ event: 'entities', entities: [{ entity: 'city', value: 'Rome', start: 3, end: 7 }] }),
      ev({ event: 'user_featurization', use_text_for_featurization: true }),
    ];
    expect(writeTestStories('c', [events])).toContain('  - user: |-\n      to [Rome](city)\n');
  });
});

describe('writeTestStories: CALM turns (Rasa Pro)', () => {
  it('writes commands under the user step and stack updates as steps; flow events and flow_hashes stay out', () => {
    const frame = {
      frame_id: 'F1',
      flow_id: 'book',
      step_id: 'START',
      frame_type: 'regular',
      type: 'flow',
    };
    const events = [
      ...sessionStart(),
      ev({
        event: 'user',
        text: 'fix my bike',
        parse_data: {
          intent: { name: 'book_repair', confidence: 0.9 },
          entities: [],
          commands: [{ command: 'start flow', flow: 'book' }],
        },
      }),
      ev({ event: 'slot', name: 'flow_hashes', value: { book: 'abc' } }),
      ev({ event: 'stack', update: JSON.stringify([{ op: 'add', path: '/0', value: frame }]) }),
      ev({ event: 'flow_started', flow_id: 'book' }),
      ev({ event: 'stack', update: '[{"op": "replace", "path": "/0/step_id", "value": "ask"}]' }),
      action('utter_ask_bike'),
      ev({ event: 'bot', text: 'Which bike?', metadata: { utter_action: 'utter_ask_bike' } }),
      ev({ event: 'flow_completed', flow_id: 'book', step_id: 'ask' }),
      action('action_listen'),
    ];
    expect(writeTestStories('c', [events])).toBe(
      [
        'version: "3.1"',
        'stories:',
        '- story: c',
        '  steps:',
        '  - intent: book_repair',
        '    user: |-',
        '      fix my bike',
        '    commands:',
        '    - command: start flow',
        '      flow: book',
        '  - stack:',
        '    - op: add',
        '      path: /0',
        '      value:',
        '        frame_id: F1',
        '        flow_id: book',
        '        step_id: START',
        '        frame_type: regular',
        '        type: flow',
        '  - stack:',
        '    - op: replace',
        '      path: /0/step_id',
        '      value: ask',
        '  - action: utter_ask_bike',
        '',
      ].join('\n'),
    );
  });
});

describe('formatMessage', () => {
  it('uses the long form when the value differs from the text and groups shared spans', () => {
    expect(
      formatMessage('NYC please', [{ entity: 'city', value: 'New York', start: 0, end: 3 }]),
    ).toBe('[NYC]{"entity": "city", "value": "New York"} please');
    expect(
      formatMessage('in Köln', [
        { entity: 'city', value: 'Köln', start: 3, end: 7 },
        { entity: 'place', value: 'Köln', start: 3, end: 7, group: '1' },
      ]),
    ).toBe('in [Köln][{"entity": "city"}, {"entity": "place", "group": "1"}]');
    expect(formatMessage('in Köln', [{ entity: 'city', value: 'Cologne', start: 3, end: 7 }])).toBe(
      'in [Köln]{"entity": "city", "value": "Cologne"}',
    );
    expect(formatMessage('in Kln', [{ entity: 'city', value: 'Köln', start: 3, end: 6 }])).toBe(
      'in [Kln]{"entity": "city", "value": "K\\u00f6ln"}',
    );
  });

  it('leaves /intent messages and entities without offsets alone', () => {
    expect(
      formatMessage('/greet{"name": "Sara"}', [
        { entity: 'name', value: 'Sara', start: 0, end: 3 },
      ]),
    ).toBe('/greet{"name": "Sara"}');
    expect(formatMessage('hi Sara', [{ entity: 'name', value: 'Sara' }])).toBe('hi Sara');
  });

  it('rejects entities with the same start but different ends', () => {
    expect(() =>
      formatMessage('New York', [
        { entity: 'a', value: 'x', start: 0, end: 3 },
        { entity: 'b', value: 'y', start: 0, end: 8 },
      ]),
    ).toThrow(/identical start but different end positions/);
  });
});
