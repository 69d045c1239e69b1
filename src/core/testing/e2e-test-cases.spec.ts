import { DialogueError } from 'src/core/errors/dialogue-error';
import {
  combineE2eTestFiles,
  E2eTestCaseError,
  looksLikeE2eTestFile,
  readE2eTestCases,
  splitTestCasePath,
} from './e2e-test-cases';

const FILE = `
fixtures:
  - premium:
      - membership: gold
      - guests: 2
metadata:
  - web:
      channel: web
      locale: en
test_cases:
  - test_case: book a room
    fixtures: [premium]
    metadata: web
    steps:
      - user: "  hi  "
        metadata: web
      - bot: "Hello!"
      - utter: utter_greet
      - slot_was_set:
          - membership
          - guests: 2
      - slot_was_not_set:
          - room_type
          - breakfast: true
`;

function problem(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('no error');
}

describe('readE2eTestCases', () => {
  it('reads test cases, fixtures and metadata, one step per slot item', () => {
    const read = readE2eTestCases(FILE, 'tests/e2e.yml');
    expect(read.fixtures).toEqual([
      {
        name: 'premium',
        slots: [
          ['membership', 'gold'],
          ['guests', 2],
        ],
      },
    ]);
    expect(read.metadata).toEqual([{ name: 'web', values: { channel: 'web', locale: 'en' } }]);
    const [t] = read.testCases;
    expect(t).toMatchObject({
      name: 'book a room',
      file: 'tests/e2e.yml',
      line: 11,
      fixtures: ['premium'],
      metadata: 'web',
    });
    expect(t?.steps).toEqual([
      { kind: 'user', text: 'hi', metadata: 'web', assertions: [], line: 15 },
      { kind: 'bot', text: 'Hello!', line: 17 },
      { kind: 'utter', name: 'utter_greet', line: 18 },
      { kind: 'slot_was_set', slot: 'membership', hasValue: false, value: undefined, line: 20 },
      { kind: 'slot_was_set', slot: 'guests', hasValue: true, value: 2, line: 21 },
      { kind: 'slot_was_not_set', slot: 'room_type', hasValue: false, value: undefined, line: 23 },
      { kind: 'slot_was_not_set', slot: 'breakfast', hasValue: true, value: true, line: 24 },
    ]);
  });

  it('an empty file has no test cases; looksLikeE2eTestFile wants a top-level test_cases key', () => {
    expect(readE2eTestCases('', 'x.yml').testCases).toEqual([]);
    expect(looksLikeE2eTestFile(FILE)).toBe(true);
    expect(looksLikeE2eTestFile('stories:\n  - story: a\n')).toBe(false);
  });

  it('names the file, line and test case of a bad step', () => {
    const text =
      'test_cases:\n  - test_case: greet\n    steps:\n      - user: hi\n      - said: x\n';
    const message = problem(() => readE2eTestCases(text, 'tests/a.yml'));
    expect(message).toBe(
      "tests/a.yml:5: test case 'greet': a step needs one of user, bot, utter, slot_was_set, slot_was_not_set",
    );
  });

  it('refuses a step with two kinds, unknown keys, bad assertions and a case without steps', () => {
    const base = 'test_cases:\n  - test_case: t\n    steps:\n';
    expect(
      problem(() => readE2eTestCases(`${base}      - user: hi\n        bot: x\n`, 'f')),
    ).toMatch(/^f:4: test case 't': a step has more than one of .* \(user, bot\)$/);
    expect(
      problem(() => readE2eTestCases(`${base}      - bot: x\n        metadata: m\n`, 'f')),
    ).toBe("f:5: test case 't': unknown key 'metadata' in a bot step");
    expect(
      problem(() =>
        readE2eTestCases(
          `${base}      - user: hi\n        assertions:\n          - flow_ended: x\n`,
          'f',
        ),
      ),
    ).toBe("f:6: test case 't': invalid assertion type 'flow_ended'");
    expect(
      problem(() =>
        readE2eTestCases(
          `${base}      - user: hi\n        assertions:\n          - bot_uttered: {}\n`,
          'f',
        ),
      ),
    ).toMatch(/^f:6: test case 't': a 'bot_uttered' assertion is empty/);
    expect(
      problem(() => readE2eTestCases(`${base}      - bot: x\n        assertions: []\n`, 'f')),
    ).toBe("f:5: test case 't': unknown key 'assertions' in a bot step");
    expect(problem(() => readE2eTestCases('test_cases:\n  - test_case: t\n', 'f'))).toBe(
      "f:2: test case 't': no `steps:`",
    );
    expect(problem(() => readE2eTestCases('test_cases:\n  - steps: []\n', 'f'))).toBe(
      'f:2: a test case needs a name (`test_case:`)',
    );
  });

  it('refuses bad fixture and metadata names and shapes', () => {
    expect(problem(() => readE2eTestCases('fixtures:\n  - 1bad:\n      - a: 1\n', 'f'))).toMatch(
      /^f:2: fixture name '1bad' must start with a letter/,
    );
    expect(problem(() => readE2eTestCases('fixtures:\n  - ok:\n      - 3\n', 'f'))).toBe(
      "f:3: fixture 'ok': each item must be a `slot: value` mapping",
    );
    expect(problem(() => readE2eTestCases('metadata:\n  - m: 3\n', 'f'))).toBe(
      "f:2: metadata 'm' must be a mapping",
    );
    expect(
      problem(() =>
        readE2eTestCases(
          'test_cases:\n  - test_case: t\n    steps:\n      - slot_was_set:\n          - {a: 1, b: 2}\n',
          'f',
        ),
      ),
    ).toBe(
      "f:5: test case 't': a `slot_was_set` item must be a slot name or one `slot: value` pair",
    );
  });

  it('throws DialogueErrors for invalid YAML', () => {
    expect(() => readE2eTestCases('test_cases: [', 'f')).toThrow(DialogueError);
  });

  it('warns that stub_custom_actions are not supported', () => {
    const read = readE2eTestCases('stub_custom_actions:\n  a: {}\ntest_cases: []\n', 'f');
    expect(read.warnings).toEqual([
      'f:1: stub_custom_actions are not supported; custom actions run on the action server of --endpoints',
    ]);
  });
});

describe('combineE2eTestFiles', () => {
  const a = readE2eTestCases(FILE, 'a.yml');
  const b = readE2eTestCases(
    `fixtures:
  - premium:
      - membership: silver
test_cases:
  - test_case: other
    steps:
      - user: hi
`,
    'b.yml',
  );

  it('joins the files; the first definition of a fixture wins', () => {
    const suite = combineE2eTestFiles([a, b]);
    expect(suite.testCases.map((t) => t.name)).toEqual(['book a room', 'other']);
    expect(suite.fixtures.get('premium')?.slots[0]).toEqual(['membership', 'gold']);
    expect(suite.metadata.get('web')?.values).toEqual({ channel: 'web', locale: 'en' });
  });

  it('keeps only the named test case, and fails for a name no file has', () => {
    expect(combineE2eTestFiles([a, b], 'other').testCases.map((t) => t.name)).toEqual(['other']);
    expect(() => combineE2eTestFiles([a, b], 'nope')).toThrow(
      new E2eTestCaseError('test case does not exist: nope'),
    );
  });

  it('names every undefined fixture and metadata with file, line and test case', () => {
    const bad = readE2eTestCases(
      `test_cases:
  - test_case: t
    fixtures: [missing]
    metadata: gone
    steps:
      - user: hi
        metadata: absent
`,
      'c.yml',
    );
    expect(problem(() => combineE2eTestFiles([bad]))).toBe(
      [
        "c.yml:2: test case 't': fixture 'missing' is not defined",
        "c.yml:2: test case 't': metadata 'gone' is not defined",
        "c.yml:6: test case 't': metadata 'absent' of the user step is not defined",
      ].join('\n'),
    );
  });
});

describe('splitTestCasePath', () => {
  it('splits path::name', () => {
    expect(splitTestCasePath('tests/e2e.yml::greet user')).toEqual({
      path: 'tests/e2e.yml',
      only: 'greet user',
    });
    expect(splitTestCasePath('tests/')).toEqual({ path: 'tests/', only: null });
  });
});
