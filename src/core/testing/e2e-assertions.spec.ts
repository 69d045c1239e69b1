import { assertionEventsOf, runAssertions, type AssertionEvent } from './e2e-assertions';
import { evaluateE2eTestCase, sameValue } from './e2e-evaluation';
import { readE2eTestCases, type E2eStep, type E2eTestCase } from './e2e-test-cases';

function testCase(body: string, order = false): E2eTestCase {
  const yaml = `test_cases:\n  - test_case: t\n${order ? '    assertion_order_enabled: true\n' : ''}    steps:\n      - user: hi\n        assertions:\n${body}`;
  return readE2eTestCases(yaml, 'f.yml').testCases[0]!;
}

function assertionsOf(t: E2eTestCase): Extract<E2eStep, { kind: 'user' }>['assertions'] {
  return (t.steps[0] as Extract<E2eStep, { kind: 'user' }>).assertions;
}

/** The events of one turn of the flowsbot, as the tracker stores them. */
const TURN = assertionEventsOf([
  { event: 'slot', name: 'flow_hashes', value: {} },
  { event: 'stack', update: '[]' },
  { event: 'flow_started', flow_id: 'book_repair', metadata: { flow_id: 'book_repair' } },
  { event: 'slot', name: 'bike_type', value: 'city' },
  { event: 'action', name: 'utter_ask_weekday' },
  {
    event: 'bot',
    text: 'Which day?',
    metadata: { utter_action: 'utter_ask_weekday' },
    data: { buttons: [{ title: 'Friday', payload: '/inform{"weekday": "friday"}' }] },
  },
  { event: 'flow_completed', flow_id: 'pattern_collect_information', step_id: 'start' },
  { event: 'flow_cancelled', flow_id: 'other', step_id: 'ask' },
  {
    event: 'flow_started',
    flow_id: 'pattern_clarification',
    metadata: { names: ['book a repair', 'opening hours'] },
  },
  { event: 'action', name: 'action_listen' },
]);

function run(body: string, turn: readonly AssertionEvent[] = TURN, order = false) {
  const t = testCase(body, order);
  return runAssertions(assertionsOf(t), turn, t.assertionOrderEnabled, sameValue);
}

describe('e2e assertions', () => {
  it('reads every assertion type with its line', () => {
    const t = testCase(
      [
        '          - flow_started: book_repair',
        '          - flow_completed: { flow_id: a, flow_step_id: s }',
        '          - flow_cancelled: { flow_id: b }',
        '          - pattern_clarification_contains: [x, y]',
        '          - action_executed: utter_x',
        '          - slot_was_set: [{ name: a, value: 1 }, { name: b }]',
        '          - slot_was_not_set: [{ name: c }]',
        '          - bot_uttered: { utter_name: u, text_matches: "^W", buttons: [{ title: T, payload: /p }] }',
        '          - bot_did_not_utter: { text_matches: sorry }',
        '          - generative_response_is_relevant: { threshold: 0.9 }',
        '          - generative_response_is_grounded: { threshold: 0.9 }',
        '',
      ].join('\n'),
    );
    const assertions = assertionsOf(t);
    expect(assertions.map((a) => a.kind)).toEqual([
      'flow_started',
      'flow_completed',
      'flow_cancelled',
      'pattern_clarification_contains',
      'action_executed',
      'slot_was_set',
      'slot_was_not_set',
      'bot_uttered',
      'bot_did_not_utter',
      'generative_response_is_relevant',
      'generative_response_is_grounded',
    ]);
    expect(assertions[0]).toEqual({ kind: 'flow_started', flowId: 'book_repair', line: 6 });
    expect(assertions[1]).toMatchObject({ flowId: 'a', stepId: 's' });
    expect(assertions[5]).toMatchObject({
      slots: [
        { name: 'a', hasValue: true, value: 1 },
        { name: 'b', hasValue: false },
      ],
    });
    expect(assertions[7]).toMatchObject({
      utterName: 'u',
      textMatches: '^W',
      buttons: [{ title: 'T', payload: '/p' }],
    });
  });

  it('passes when the turn holds what each assertion names', () => {
    const outcome = run(
      [
        '          - flow_started: book_repair',
        '          - slot_was_set: [{ name: bike_type, value: city }, { name: bike_type }]',
        '          - slot_was_not_set: [{ name: weekday }, { name: bike_type, value: road }]',
        '          - action_executed: utter_ask_weekday',
        '          - bot_uttered: { utter_name: utter_ask_weekday, text_matches: "day\\\\?$" }',
        '          - bot_uttered: { buttons: [{ title: Friday, payload: "/inform{\\"weekday\\": \\"friday\\"}" }] }',
        '          - bot_did_not_utter: { text_matches: "[Ss]orry" }',
        '          - flow_completed: { flow_id: pattern_collect_information, flow_step_id: start }',
        '          - flow_cancelled: { flow_id: other }',
        '          - pattern_clarification_contains: [opening hours, book a repair]',
        '',
      ].join('\n'),
    );
    expect(outcome).toEqual({ failure: null, skipped: [] });
  });

  it.each([
    ['- flow_started: opening_hours', "Flow with id 'opening_hours' did not start."],
    [
      '- flow_completed: { flow_id: pattern_collect_information, flow_step_id: x }',
      "Flow with id 'pattern_collect_information' did not complete at expected step id 'x'. The actual step id was 'start'.",
    ],
    ['- flow_cancelled: { flow_id: book_repair }', "Flow with id 'book_repair' was not cancelled."],
    ['- slot_was_set: [{ name: weekday }]', "Slot 'weekday' was not set."],
    [
      '- slot_was_set: [{ name: bike_type, value: road }]',
      "Slot 'bike_type' was set to a different value 'city' than the expected 'road' value.",
    ],
    [
      '- slot_was_not_set: [{ name: bike_type }]',
      "Slot 'bike_type' was set to 'city' but it should not have been set.",
    ],
    ['- action_executed: utter_x', "Action 'utter_x' did not execute."],
    [
      '- bot_uttered: { utter_name: utter_hours }',
      "Bot did not utter any response with the 'utter_hours' response.",
    ],
    [
      '- bot_did_not_utter: { utter_name: utter_ask_weekday }',
      "Bot uttered a forbidden response: utter_ask_weekday 'Which day?'.",
    ],
    [
      '- pattern_clarification_contains: [book a repair]',
      "'pattern_clarification' pattern did not contain the expected options. Expected options: book a repair; actual: book a repair, opening hours.",
    ],
  ])('fails %s', (assertion, message) => {
    const outcome = run(`          ${assertion}\n`);
    expect(outcome.failure?.message).toBe(message);
    expect(outcome.failure?.line).toBe(6);
  });

  it('with assertion_order_enabled, searches only after the previous match', () => {
    const inOrder =
      '          - flow_started: book_repair\n          - bot_uttered: { utter_name: utter_ask_weekday }\n';
    expect(run(inOrder, TURN, true).failure).toBeNull();
    const reversed =
      '          - bot_uttered: { utter_name: utter_ask_weekday }\n          - flow_started: book_repair\n';
    expect(run(reversed, TURN, false).failure).toBeNull();
    expect(run(reversed, TURN, true).failure?.message).toMatch(
      /^Flow with id 'book_repair' did not start\. \(assertion_order_enabled/,
    );
  });

  it('skips the LLM-judged assertions with a reason and never fails on them', () => {
    const outcome = run('          - generative_response_is_grounded: { threshold: 0.9 }\n');
    expect(outcome.failure).toBeNull();
    expect(outcome.skipped).toEqual([
      "'generative_response_is_grounded' (line 6) needs an LLM judge, which Parley does not run; skipped",
    ]);
  });

  it('fails the test case at the first failing assertion, with the turn as transcript', () => {
    const t = testCase('          - flow_started: opening_hours\n');
    const result = evaluateE2eTestCase(t, {
      before: [],
      turns: new Map([[0, [{ type: 'user', text: 'hi' }]]]),
      stepsRun: 1,
      assertionTurns: new Map([[0, TURN.slice(1, 3)]]),
    });
    expect(result).toMatchObject({ passed: false, errorLine: 6 });
    expect(result.difference).toEqual([
      "Assertion type 'flow_started' failed with this error message: Flow with id 'opening_hours' did not start.",
      'Actual events transcript:',
      '  flow_started: book_repair',
      '  slot_was_set: bike_type: "city"',
    ]);
  });
});
