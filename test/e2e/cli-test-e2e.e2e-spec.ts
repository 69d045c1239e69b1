import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withEndpointsFile } from 'test/utils/action-server';
import { botFiles, FORMBOT, MOODBOT_DIR, trainBot } from 'test/utils/bots';
import { cli, cliAsync } from 'test/utils/cli';
import { startFormbotActionServer } from 'test/utils/formbot-action-server';

/** Result file entries as Rasa's `TestResult.as_dict()`. */
interface ResultEntry {
  name: string;
  pass_status: boolean;
  expected_steps: Record<string, unknown>[];
  error_path?: string;
  difference?: string[];
}

const PASSING = `
test_cases:
  - test_case: cheer up
    steps:
      - user: /greet
      - bot: "Hi there! How is your day going?"
      - utter: utter_greet
      - user: /mood_unhappy
      - utter: utter_cheer_up
      - utter: utter_did_that_help
      - user: /affirm
      - utter: utter_happy
  - test_case: bot challenge
    steps:
      - user: /bot_challenge
      - bot: "I am a bot, built with Parley."
      - slot_was_not_set:
          - mood
`;

const FAILING = `
test_cases:
  - test_case: all good
    steps:
      - user: /goodbye
      - utter: utter_goodbye
  - test_case: wrong bot text
    steps:
      - user: /greet
      - bot: "Hello you"
  - test_case: wrong utter and slot
    steps:
      - user: /bot_challenge
      - utter: utter_iamabot
      - user: /goodbye
      - utter: utter_happy
      - slot_was_set:
          - mood: sad
`;

const FIXTURES_AND_METADATA = `
fixtures:
  - returning_user:
      - user_name: Ann
      - visits: 3
metadata:
  - web:
      channel: web
test_cases:
  - test_case: fixtures are set before the first message
    fixtures: [returning_user]
    metadata: web
    steps:
      - slot_was_set:
          - user_name: Ann
          - visits
      - user: /greet
        metadata: web
      - utter: utter_greet
      - slot_was_not_set:
          - user_name
  - test_case: no fixtures, no slots
    steps:
      - slot_was_not_set:
          - user_name
      - user: /greet
      - utter: utter_greet
`;

/**
 * `parley test e2e`: Rasa Pro's end-to-end test cases run against a trained model in the CLI
 * process (the server's conversation runtime on in-memory stores), with Rasa's report and
 * result files, and exit code 1 on failure.
 */
describe('parley test e2e', () => {
  let dir: string;
  let models: string;

  const write = (name: string, text: string): string => {
    const file = join(dir, 'tests', name);
    writeFileSync(file, text);
    return file;
  };
  const results = (out: string): { passed: ResultEntry[]; failed: ResultEntry[] } =>
    JSON.parse(readFileSync(join(out, 'e2e_results.json'), 'utf8')) as {
      passed: ResultEntry[];
      failed: ResultEntry[];
    };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-e2e-'));
    mkdirSync(join(dir, 'tests'));
    models = trainBot(botFiles(MOODBOT_DIR), join(dir, 'models'));
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes test cases that hold, with exit code 0 and the result files in --out', () => {
    const file = write('passing.yml', PASSING);
    const out = join(dir, 'out-pass');
    const run = cli(['test', 'e2e', file, '--model', models, '--out', out]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/=+ 0 failed, 2 passed =+\n$/);
    expect(run.stdout).not.toContain('FAILURES');
    const json = results(out);
    expect(json.passed.map((r) => r.name)).toEqual(['cheer up', 'bot challenge']);
    expect(json.failed).toEqual([]);
    expect(json.passed[1]).toEqual({
      name: 'bot challenge',
      pass_status: true,
      expected_steps: [
        { user: '/bot_challenge' },
        { bot: 'I am a bot, built with Parley.' },
        { slot_was_not_set: 'mood' },
      ],
    });
    expect(readFileSync(join(out, 'e2e_results_passed.yml'), 'utf8')).toMatch(
      /^test_results:\n {2}- name: cheer up\n/,
    );
    expect(readFileSync(join(out, 'e2e_results_failed.yml'), 'utf8')).toBe('test_results: []\n');
  });

  it('reports a wrong bot text, a wrong utter and a wrong slot with a diff, and exits 1', () => {
    const file = write('failing.yml', FAILING);
    const out = join(dir, 'out-fail');
    const run = cli(['test', 'e2e', file, '--model', models, '--out', out]);
    expect(run.status).toBe(1);
    const stdout = run.stdout;
    expect(stdout).toContain(`'wrong bot text' in ${file}:7 failed`);
    expect(stdout).toContain(`Mismatch starting at ${file}:10:`);
    expect(stdout).toContain(
      ['  user: /greet', '- bot: Hi there! How is your day going?', '+ bot: Hello you'].join('\n'),
    );
    expect(stdout).toContain(`Mismatch starting at ${file}:16:`);
    expect(stdout).toContain(
      [
        '  user: /bot_challenge',
        '  bot: utter_iamabot',
        '  user: /goodbye',
        '- bot: utter_goodbye',
        '+ bot: utter_happy',
        '- * No Slot Set *',
        '+ slot_was_set: mood: sad (str)',
      ].join('\n'),
    );
    expect(stdout).toContain(
      `FAILED ${file}::wrong bot text\nFAILED ${file}::wrong utter and slot\n`,
    );
    expect(stdout).toMatch(/=+ 2 failed, 1 passed =+\n$/);
    const json = results(out);
    expect(json.passed.map((r) => r.name)).toEqual(['all good']);
    expect(json.failed.map((r) => [r.name, r.error_path])).toEqual([
      ['wrong bot text', `${file}:10`],
      ['wrong utter and slot', `${file}:16`],
    ]);
    expect(json.failed[0]?.difference).toEqual([
      '  user: /greet',
      '- bot: Hi there! How is your day going?',
      '+ bot: Hello you',
    ]);
  });

  it('--fail-fast stops at the first failing test case; path::name runs one test case', () => {
    const file = write('failing.yml', FAILING);
    const fast = cli(['test', 'e2e', file, '--model', models, '--fail-fast']);
    expect(fast.status).toBe(1);
    expect(fast.stdout).toContain('stopping after 1 failure');
    expect(fast.stdout).toMatch(/=+ 1 failed, 1 passed =+\n$/);
    expect(fast.stdout).not.toContain('wrong utter and slot');

    const one = cli(['test', 'e2e', `${file}::all good`, '--model', models]);
    expect(one.status).toBe(0);
    expect(one.stdout).toMatch(/=+ 0 failed, 1 passed =+\n$/);
  });

  it('sets fixtures before the first message; a folder is read whole, other YAML skipped', () => {
    const folder = join(dir, 'tests', 'fixtures-folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'e2e.yml'), FIXTURES_AND_METADATA);
    writeFileSync(join(folder, 'stories.yml'), 'stories: []\n');
    const run = cli(['test', 'e2e', folder, '--model', models]);
    expect(run.stdout).toMatch(/=+ 0 failed, 2 passed =+\n$/);
    expect(run.status).toBe(0);
  });

  it('exits 1 naming the file and test case of an undefined fixture, and when nothing is found', () => {
    const file = write(
      'undefined.yml',
      'test_cases:\n  - test_case: t\n    fixtures: [nope]\n    steps:\n      - user: hi\n',
    );
    const run = cli(['test', 'e2e', file, '--model', models]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${file}:2: test case 't': fixture 'nope' is not defined`);

    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const none = cli(['test', 'e2e', empty, '--model', models]);
    expect(none.status).toBe(1);
    expect(none.stdout).toContain('no test cases found');

    const missing = cli(['test', 'e2e', join(dir, 'missing.yml'), '--model', models]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('path to test cases does not exist');
  });

  describe('formbot with its action server', () => {
    let formModels: string;

    beforeAll(() => {
      formModels = trainBot(FORMBOT, join(dir, 'form-models'));
    }, 180_000);

    it('runs the custom actions for real: validation, prefilled slots, metadata', async () => {
      const actions = await withEndpointsFile(startFormbotActionServer());
      try {
        const file = write(
          'formbot.yml',
          `
fixtures:
  - double_room:
      - room_type: double
metadata:
  - web:
      channel: web
  - vip:
      tier: gold
test_cases:
  - test_case: validation by the action server
    metadata: web
    steps:
      - user: /request_booking
        metadata: vip
      - bot: "Which room would you like: single, double or suite?"
      - user: '/inform{"room_type": "penthouse"}'
      - utter: utter_wrong_room_type
      - utter: utter_ask_room_type
      - slot_was_set:
          - room_type: null
      - user: '/inform{"room_type": "suite"}'
      - slot_was_set:
          - room_type: suite
      - utter: utter_ask_guests
      - user: '/inform{"number": "3"}'
      - slot_was_set:
          - guests: 3
      - utter: utter_ask_breakfast
  - test_case: a fixture fills the room type
    fixtures: [double_room]
    steps:
      - user: /request_booking
      - utter: utter_ask_guests
      - slot_was_not_set:
          - guests
      # the form validates the prefilled slot when it starts
      - slot_was_set:
          - room_type: double
  - test_case: a guest count the action server refuses
    steps:
      - user: /request_booking
      - user: '/inform{"room_type": "single"}'
      - user: '/inform{"number": "0"}'
      - slot_was_set:
          - guests: 0
`,
        );
        const run = await cliAsync([
          'test',
          'e2e',
          file,
          '--model',
          formModels,
          '--endpoints',
          actions.endpoints,
        ]);
        expect(run.stdout).toContain(
          [
            '  user: /inform{"number": "0"}',
            // the first value the turn set: the entity's text, before validation refused it
            '- slot_was_set: guests: 0 (str)',
            '+ slot_was_set: guests: 0 (int)',
          ].join('\n'),
        );
        expect(run.stdout).toMatch(/=+ 1 failed, 2 passed =+\n$/);
        expect(run.status).toBe(1);
        const validations = actions.calls.filter((c) => c.next_action === 'validate_booking_form');
        expect(validations.length).toBeGreaterThanOrEqual(4);
        const last = validations
          .filter((c) => c.sender_id.startsWith('validation_by_the_action'))
          .at(-1);
        const userEvents = last?.tracker.events.filter((e) => e.event === 'user') ?? [];
        expect(userEvents.length).toBe(4);
        // The test case's metadata goes with every message, a step's own on top of it.
        expect(userEvents.map((e) => (e.metadata as Record<string, unknown>).tier)).toEqual([
          'gold',
          ...userEvents.slice(1).map(() => undefined),
        ]);
        for (const e of userEvents) {
          expect(e.metadata).toMatchObject({ channel: 'web' });
        }
      } finally {
        await actions.close();
      }
    });
  });
});
