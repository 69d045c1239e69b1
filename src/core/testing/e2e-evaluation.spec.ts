import {
  e2eEventsOf,
  evaluateE2eTestCase,
  findE2eFailures,
  type E2eActualEvent,
  type E2eRun,
} from './e2e-evaluation';
import { readE2eTestCases, type E2eTestCase } from './e2e-test-cases';

function testCase(steps: string): E2eTestCase {
  const read = readE2eTestCases(`test_cases:\n  - test_case: t\n    steps:\n${steps}`, 'f.yml');
  return read.testCases[0]!;
}

const user = (text: string): E2eActualEvent => ({ type: 'user', text });
const bot = (text: string, utterAction: string | null = null): E2eActualEvent => ({
  type: 'bot',
  text,
  utterAction,
});
const slot = (name: string, value: unknown): E2eActualEvent => ({ type: 'slot', name, value });

function run(
  before: E2eActualEvent[],
  turns: Array<[number, E2eActualEvent[]]>,
  stepsRun: number,
): E2eRun {
  return { before, turns: new Map(turns), stepsRun };
}

describe('e2eEventsOf', () => {
  it('keeps user, bot and slot events with the response name of a bot message', () => {
    expect(
      e2eEventsOf([
        { event: 'action', name: 'action_listen' },
        { event: 'user', text: 'hi' },
        { event: 'bot', text: 'Hello', metadata: { utter_action: 'utter_greet' } },
        { event: 'bot', text: 'Custom' },
        { event: 'slot', name: 'a', value: 1 },
        { event: 'slot', name: 'b' },
      ]),
    ).toEqual([
      user('hi'),
      bot('Hello', 'utter_greet'),
      bot('Custom'),
      slot('a', 1),
      slot('b', null),
    ]);
  });
});

describe('evaluateE2eTestCase', () => {
  const steps = testCase(`      - user: hi
      - bot: Hello
      - utter: utter_ask
      - slot_was_set:
          - name
          - guests: 2
      - slot_was_not_set:
          - room
          - breakfast: true
      - user: bye
      - utter: utter_goodbye
`);

  it('passes when every step matches an event of its turn, in any order', () => {
    const result = evaluateE2eTestCase(
      steps,
      run(
        [],
        [
          [
            0,
            [
              user('hi'),
              slot('guests', 2.0),
              bot('Which one?', 'utter_ask'),
              slot('name', 'Ann'),
              bot('Hello'),
              slot('breakfast', false),
            ],
          ],
          [7, [user('bye'), bot('See you', 'utter_goodbye')]],
        ],
        9,
      ),
    );
    expect(result).toMatchObject({ passed: true, errorLine: undefined, difference: [] });
  });

  it('checks each step against its own turn only', () => {
    const result = evaluateE2eTestCase(
      steps,
      run(
        [],
        [
          [
            0,
            [user('hi'), bot('Hello'), bot('x', 'utter_ask'), slot('name', 1), slot('guests', 2)],
          ],
          // utter_goodbye was said in the first turn's place only
          [7, [user('bye')]],
        ],
        9,
      ),
    );
    expect(result.passed).toBe(false);
    expect(result.errorLine).toBe(14);
    expect(result.difference.slice(-3)).toEqual([
      '  user: bye',
      '- * No Bot Response *',
      '+ bot: utter_goodbye',
    ]);
  });

  it("diffs a failing bot text with the first of the turn's messages no step claims", () => {
    const t = testCase(`      - user: hi
      - bot: Hello
      - bot: How can I help?
`);
    const result = evaluateE2eTestCase(
      t,
      run([], [[0, [user('hi'), bot('Hello'), bot('What now?')]]], 3),
    );
    expect(result).toMatchObject({ passed: false, errorLine: 6 });
    expect(result.difference).toEqual([
      '  user: hi',
      '  bot: Hello',
      '- bot: What now?',
      '+ bot: How can I help?',
    ]);
  });

  it('diffs slots with their Python types, and a slot that should not be set', () => {
    const t = testCase(`      - user: hi
      - slot_was_set:
          - guests: 2
          - name
          - tags: [a, b]
      - slot_was_not_set:
          - room
`);
    const result = evaluateE2eTestCase(
      t,
      run(
        [],
        [
          [
            0,
            [
              user('hi'),
              slot('guests', '2'),
              slot('name', 'Ann'),
              slot('tags', ['a']),
              slot('room', true),
            ],
          ],
        ],
        5,
      ),
    );
    expect(result.difference).toEqual([
      '  user: hi',
      '- slot_was_set: guests: 2 (str)',
      '+ slot_was_set: guests: 2 (int)',
      '  slot_was_set: name: Ann (str)',
      "- slot_was_set: tags: ['a'] (list)",
      "+ slot_was_set: tags: ['a', 'b'] (list)",
      '- slot_was_set: room: True (bool)',
      '+ slot_was_not_set: room',
    ]);
  });

  it('checks steps before the first user message against the events before it (fixtures)', () => {
    const t = testCase(`      - slot_was_set:
          - tier: gold
      - user: hi
      - slot_was_not_set:
          - tier
`);
    expect(evaluateE2eTestCase(t, run([slot('tier', 'gold')], [[1, [user('hi')]]], 3)).passed).toBe(
      true,
    );
    const failed = evaluateE2eTestCase(t, run([], [[1, [user('hi'), slot('tier', 'x')]]], 3));
    expect(failed.difference).toEqual([
      '- * No Slot Set *',
      '+ slot_was_set: tier: gold (str)',
      '  user: hi',
      '- slot_was_set: tier: x (str)',
      '+ slot_was_not_set: tier',
    ]);
  });

  it('evaluates only the steps run (fail-fast), from the latest user step on', () => {
    const t = testCase(`      - user: hi
      - bot: Hello
      - user: more
      - bot: Again
      - bot: Never checked
`);
    const partial = run(
      [],
      [
        [0, [user('hi'), bot('Nope')]],
        [2, [user('more'), bot('Again')]],
      ],
      4,
    );
    expect(findE2eFailures(t.steps, partial)).toEqual([1]);
    expect(findE2eFailures(t.steps, partial, 2)).toEqual([]);
    expect(evaluateE2eTestCase(t, partial).errorLine).toBe(5);
  });
});
