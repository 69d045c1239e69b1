import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { FLOWSBOT_DIR } from 'test/utils/bots';
import { cli } from 'test/utils/cli';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';

const CONFIG = `language: en
pipeline:
  - name: WhitespaceTokenizer
  - name: CountVectorsFeaturizer
  - name: DIETClassifier
    epochs: 1
policies:
  - name: RulePolicy
`;

const DOMAIN = `version: "3.1"
intents: [ask_hours, thanks]
responses:
  utter_hours: [{ text: "We open at nine." }]
  utter_welcome: [{ text: "You're welcome." }]
`;

const NLU = `version: "3.1"
nlu:
  - intent: ask_hours
    examples: |
      - when do you open
      - what are your hours
  - intent: thanks
    examples: |
      - thanks
      - thank you
`;

const CLEAN_RULES = `version: "3.1"
rules:
  - rule: hours
    steps: [{ intent: ask_hours }, { action: utter_hours }]
  - rule: thanks
    steps: [{ intent: thanks }, { action: utter_welcome }]
`;

/** A project laid out as Rasa's (domain.yml, data/), in a fresh folder. */
function project(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  for (const [file, text] of Object.entries({
    'domain.yml': DOMAIN,
    'config.yml': CONFIG,
    ...files,
  })) {
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

describe('parley data validate', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'parley-validate-'));
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('passes a consistent project with exit 0', () => {
    const dir = project(root, 'clean', { 'data/nlu.yml': NLU, 'data/rules.yml': CLEAN_RULES });
    const run = cli(['data', 'validate'], {}, 60_000, dir);
    expect(run.stderr).toContain('Validation passed: 0 errors, 0 warnings.');
    expect(run.status).toBe(0);
  });

  it('fails with exit 1 naming the unknown intent, action and the story conflict', () => {
    const dir = project(root, 'broken', {
      'data/nlu.yml': NLU,
      'data/stories.yml': `version: "3.1"
stories:
  - story: hours then thanks
    steps:
      - intent: ask_hours
      - action: utter_hours
      - action: action_check_holidays
  - story: hours only
    steps:
      - intent: ask_hours
      - action: utter_hours
      - intent: thanks
      - action: utter_welcome
  - story: chit-chat
    steps:
      - intent: how_are_you
      - action: utter_welcome
`,
    });
    const run = cli(
      ['data', 'validate', '--data', 'data', '--domain', 'domain.yml'],
      {},
      60_000,
      dir,
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /error: The intent 'how_are_you' is used in story 'chit-chat' \(data\/stories\.yml:\d+\)/,
    );
    expect(run.stderr).toContain(
      "error: The action 'action_check_holidays' is used in story 'hours then thanks'",
    );
    expect(run.stderr).toContain("Story structure conflict after action 'utter_hours':");
    expect(run.stderr).toMatch(/Validation failed: \d+ errors/);

    const stories = cli(['data', 'validate', 'stories', '--max-history', '2'], {}, 60_000, dir);
    expect(stories.status).toBe(1);
    expect(stories.stderr).toContain('Story structure conflict');
    expect(stories.stderr).not.toContain("intent 'how_are_you'");
  });

  it('fails on warnings only with --fail-on-warnings', () => {
    const dir = project(root, 'warned', {
      'data/nlu.yml': NLU.replace('- thank you', '- when do you open'),
      'data/rules.yml': CLEAN_RULES,
    });
    const plain = cli(['data', 'validate'], {}, 60_000, dir);
    expect(plain.stderr).toContain(
      "warning: The example 'when do you open' was found labeled with multiple different intents",
    );
    expect(plain.status).toBe(0);
    const strict = cli(['data', 'validate', '--fail-on-warnings'], {}, 60_000, dir);
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain('(--fail-on-warnings)');
  });

  it('refuses a --max-history that is not a positive integer, and unknown checks (exit 2)', () => {
    const dir = project(root, 'usage', { 'data/nlu.yml': NLU, 'data/rules.yml': CLEAN_RULES });
    expect(cli(['data', 'validate', '--max-history', '0'], {}, 60_000, dir).status).toBe(2);
    const unknown = cli(['data', 'validate', 'intents'], {}, 60_000, dir);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown check 'intents'");
  });
});

/** The flowsbot fixture (domain, config, nlu and flows), copied into `root/name` with `changes`. */
function flowsProject(
  root: string,
  name: string,
  changes: (file: string, text: string) => string = (_, text) => text,
): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  for (const file of ['domain.yml', 'config.yml', 'data/nlu.yml', 'data/flows.yml']) {
    writeFileSync(join(dir, file), changes(file, readFileSync(join(FLOWSBOT_DIR, file), 'utf8')));
  }
  return dir;
}

describe('parley data validate: flows', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'parley-validate-flows-'));
  });

  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('passes a valid flows project, with and without `flows`', () => {
    const dir = flowsProject(root, 'valid');
    for (const args of [
      ['data', 'validate', '--fail-on-warnings'],
      ['data', 'validate', 'flows'],
    ]) {
      const run = cli(args, {}, 60_000, dir);
      expect(run.stderr).toContain('Validation passed: 0 errors, 0 warnings.');
      expect(run.status).toBe(0);
    }
  });

  it('names a collect without a question and a collected slot the domain lacks (exit 1)', () => {
    const dir = flowsProject(root, 'broken', (file, text) => {
      if (file === 'domain.yml') {
        return text.replace(/ {2}utter_ask_weekday:\n {4}- text: .*\n/, '');
      }
      if (file === 'data/flows.yml') {
        return text.replace(
          '      - collect: weekday\n',
          '      - collect: weekday\n      - collect: pickup_time\n',
        );
      }
      return text;
    });
    expect(readFileSync(join(dir, 'domain.yml'), 'utf8')).not.toContain('utter_ask_weekday');
    for (const args of [
      ['data', 'validate'],
      ['data', 'validate', 'flows'],
    ]) {
      const run = cli(args, {}, 60_000, dir);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        "error: data/flows.yml: The collect step 'book_repair_1_collect_weekday' of flow 'book_repair' " +
          "has neither a response 'utter_ask_weekday' nor an action 'action_ask_weekday'",
      );
      expect(run.stderr).toContain(
        "error: data/flows.yml: The slot 'pickup_time' is collected in step " +
          "'book_repair_2_collect_pickup_time' of flow 'book_repair', but it is not listed in the domain slots.",
      );
      expect(run.stderr).toContain('Validation failed: 2 errors, 0 warnings.');
    }
  });

  it('reports a malformed flows file with its file and line (exit 1)', () => {
    const dir = flowsProject(root, 'malformed', (file, text) =>
      file === 'data/flows.yml' ? 'flows:\n  - book_repair\n' : text,
    );
    const run = cli(['data', 'validate', 'flows'], {}, 60_000, dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      'error: data/flows.yml:2: flows: Found a list but expected a dictionary of flows.',
    );
  });

  it('warns that there are no flows to check (exit 1 only with --fail-on-warnings)', () => {
    const dir = project(root, 'no-flows', { 'data/nlu.yml': NLU, 'data/rules.yml': CLEAN_RULES });
    const run = cli(['data', 'validate', 'flows'], {}, 60_000, dir);
    expect(run.stderr).toContain(
      'warning: No flows were found in the data files. Will not proceed with flow validation.',
    );
    expect(run.status).toBe(0);
    expect(cli(['data', 'validate', 'flows', '--fail-on-warnings'], {}, 60_000, dir).status).toBe(
      1,
    );
  });
});

describe('training refuses actions the domain lacks', () => {
  const STORIES = `version: "3.1"
rules:
  - rule: fallback
    steps:
      - intent: nlu_fallback
      - action: two_stage_fallback
      - active_loop: two_stage_fallback
`;
  let root: string;
  let t: TestApp;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'parley-unknown-action-'));
    t = await startTestApp();
  });

  afterAll(async () => {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('parley train warns about the policy keys it ignores, and trains', () => {
    const dir = project(root, 'ted', {
      'config.yml': `${CONFIG}  - name: TEDPolicy\n    epochs: 5\n    constrain_similarities: true\n`,
      'data/nlu.yml': NLU,
      'data/rules.yml': CLEAN_RULES,
    });
    const run = cli(['train', '--out', join(dir, 'models')], {}, 60_000, dir);
    expect(run.stderr).toContain(
      "warning: config.yml: TEDPolicy ignores 'constrain_similarities' (it reads only 'max_history', 'epochs', 'priority').",
    );
    expect(run.status).toBe(0);
  });

  it('parley train exits 1 naming the action, its rule, file and line', () => {
    const dir = project(root, 'bot', { 'data/nlu.yml': NLU, 'data/rules.yml': STORIES });
    const run = cli(['train', '--out', join(dir, 'models')], {}, 60_000, dir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/'two_stage_fallback' in rule 'fallback' \(data\/rules\.yml:\d+\)/);
  });

  it('POST /model/train answers 400 with the same message', async () => {
    const body = `${DOMAIN}\n${CONFIG}\n${NLU.replace('version: "3.1"\n', '')}\n${STORIES.replace('version: "3.1"\n', '')}`;
    const res = await request(t.url)
      .post('/model/train?save_to_default_model_directory=false')
      .set('Content-Type', 'application/x-yaml')
      .send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'failure', code: 400 });
    expect(res.body.message).toContain("'two_stage_fallback' in rule 'fallback'");
  });
});
