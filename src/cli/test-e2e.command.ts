import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import {
  AssistantSource,
  CollectingOutputChannel,
  ConversationRuntime,
  EventVerbosity,
  InMemoryLockStore,
  InMemoryTrackerStore,
  OutputChannelDirectory,
  OutputDelivery,
  SystemClock,
  type JsonObject,
  type LoadedAssistant,
  type RuntimeLog,
} from 'src/core';
import { assertionEventsOf, type AssertionEvent } from 'src/core/testing/e2e-assertions';
import {
  e2eEventsOf,
  evaluateE2eTestCase,
  findE2eFailures,
  type E2eActualEvent,
  type E2eRun,
  type E2eTestResult,
} from 'src/core/testing/e2e-evaluation';
import {
  combineE2eTestFiles,
  looksLikeE2eTestFile,
  readE2eTestCases,
  splitTestCasePath,
  type E2eStep,
  type E2eTestCase,
  type E2eTestFile,
  type E2eTestSuite,
} from 'src/core/testing/e2e-test-cases';
import { readDialogueEndpoints } from 'src/modules/engine';
import { PARLEY_VERSION } from 'src/platform/config/version';
import { stringify } from 'yaml';
import { loadCliAssistant } from './dialogue.command';

/** Rasa's default e2e test file. */
export const DEFAULT_E2E_TESTS = 'tests/e2e_test_cases.yml';

/** Options of `parley test e2e`. */
export interface TestE2eOptions {
  model?: string;
  endpoints?: string;
  failFast?: boolean;
  /** Folder for e2e_results.json and Rasa's e2e_results_passed.yml / e2e_results_failed.yml. */
  out?: string;
  /** Rasa's `-o/--e2e-results`: write the result files into tests/. */
  e2eResults?: boolean;
}

export interface E2eOutcome {
  readonly passed: E2eTestResult[];
  readonly failed: E2eTestResult[];
  /** 0 when every test case passed, else 1 (also for no test cases, as Rasa). */
  readonly exitCode: number;
  readonly files: string[];
}

class LoadedModel extends AssistantSource {
  constructor(private readonly assistant: LoadedAssistant) {
    super();
  }
  current(): LoadedAssistant {
    return this.assistant;
  }
}

/**
 * `parley test e2e [path]`: Rasa Pro's end-to-end tests. Each test case is a fresh conversation
 * run in this process by the server's own ConversationRuntime (in-memory tracker and lock
 * stores, the model of --model, the action server and NLG server of --endpoints: custom
 * actions run for real). Fixtures are stored as slot events before the first message; every
 * user step is a message (with its metadata); bot, utter and slot steps are checked against
 * the events of the latest user turn. Prints Rasa's report; exit code 1 on any failure.
 */
export async function testE2e(
  pathArg: string | undefined,
  opts: TestE2eOptions,
  print: (text: string) => void = (text) => process.stdout.write(text),
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<E2eOutcome> {
  const { path, only } = splitTestCasePath(pathArg ?? DEFAULT_E2E_TESTS);
  const suite = await readSuite(path, only);
  for (const w of suite.warnings) warn(`warning: ${w}`);
  const results: E2eTestResult[] = [];
  if (suite.testCases.length > 0) {
    const runner = await E2eRunner.create(opts, warn);
    for (const testCase of suite.testCases) {
      const result = await runner.run(testCase, suite, opts.failFast === true);
      results.push(result);
      if (opts.failFast && !result.passed) break;
    }
  }
  const passed = results.filter((r) => r.passed);
  const failed = results.filter((r) => !r.passed);
  const out = opts.out ?? (opts.e2eResults ? 'tests' : undefined);
  const files = out === undefined ? [] : await writeResults(out, passed, failed);
  for (const f of files) print(`Test results have been saved at path: ${f}.\n`);
  print(report(passed, failed, opts.failFast === true && failed.length > 0));
  const exitCode = failed.length > 0 || results.length === 0 ? 1 : 0;
  return { passed, failed, exitCode, files };
}

async function readSuite(path: string, only: string | null): Promise<E2eTestSuite> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new Error(
      `path to test cases does not exist: ${path}; pass a file or folder of e2e test cases (default ${DEFAULT_E2E_TESTS})`,
    );
  }
  const files = info.isDirectory() ? await yamlFilesUnder(path) : [path];
  const read: E2eTestFile[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    if (looksLikeE2eTestFile(text)) read.push(readE2eTestCases(text, file));
  }
  return combineE2eTestFiles(read, only);
}

async function yamlFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (entry.name.startsWith('.')) continue;
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await yamlFilesUnder(p)));
    else if (['.yml', '.yaml'].includes(extname(entry.name).toLowerCase())) out.push(p);
  }
  return out;
}

/** Runs test cases, one fresh conversation each, on one in-process runtime. */
class E2eRunner {
  private count = 0;

  private constructor(
    private readonly runtime: ConversationRuntime,
    private readonly warn: (line: string) => void,
  ) {}

  static async create(opts: TestE2eOptions, warn: (line: string) => void): Promise<E2eRunner> {
    const { assistant } = await loadCliAssistant(opts.model);
    if (!assistant.policies) throw new Error('the model has no dialogue policies (NLU-only model)');
    let endpoints = null;
    if (opts.endpoints !== undefined) {
      endpoints = await readDialogueEndpoints(opts.endpoints, PARLEY_VERSION, 300_000);
      for (const w of endpoints.warnings) warn(`warning: ${w}`);
    }
    const log: RuntimeLog = {
      info: () => undefined,
      warn: (message, data) => warn(`warning: ${message}${detail(data)}`),
      error: (message, data) => warn(`error: ${message}${detail(data)}`),
    };
    const runtime = new ConversationRuntime({
      store: new InMemoryTrackerStore(),
      locks: new InMemoryLockStore(),
      clock: new SystemClock(),
      assistants: new LoadedModel(assistant),
      outputs: new OutputChannelDirectory(),
      listeners: [new OutputDelivery(log)],
      log,
      options: {
        maxPredictions: 10,
        maxTextLength: 10_000,
        cacheSize: 100,
        cacheBytes: 64 * 1024 * 1024,
        actionEndpoint: endpoints?.action ?? null,
        nlg: endpoints?.nlg ?? null,
      },
    });
    return new E2eRunner(runtime, warn);
  }

  async run(testCase: E2eTestCase, suite: E2eTestSuite, failFast: boolean): Promise<E2eTestResult> {
    const id = `${testCase.name.replace(/\s+/g, '_')}_${Date.now()}_${++this.count}`;
    const slots: Record<string, unknown>[] = [];
    for (const name of testCase.fixtures) {
      for (const [slot, value] of suite.fixtures.get(name)?.slots ?? []) {
        slots.push({ event: 'slot', name: slot, value });
      }
    }
    // The session starts (and the fixtures are set) before the first message, as in Rasa.
    await this.runtime.appendEvents({
      conversationId: id,
      events: slots,
      verbosity: EventVerbosity.NONE,
      executeSideEffects: false,
      outputChannel: null,
    });
    let cursor = 0;
    let latestRaw: Record<string, unknown>[] = [];
    const next = async (): Promise<E2eActualEvent[]> => {
      const events = await this.events(id);
      const fresh = events.slice(cursor);
      cursor = events.length;
      latestRaw = fresh;
      return e2eEventsOf(fresh);
    };
    const assertionTurns = new Map<number, AssertionEvent[]>();
    const before = await next();
    const turns = new Map<number, E2eActualEvent[]>();
    const caseMetadata = testCase.metadata ? suite.metadata.get(testCase.metadata)?.values : null;
    let lastUser = 0;
    let stepsRun = 0;
    for (const [i, step] of testCase.steps.entries()) {
      stepsRun = i + 1;
      if (step.kind !== 'user') {
        if (failFast) {
          const run: E2eRun = { before, turns, stepsRun };
          if (findE2eFailures(testCase.steps, run, lastUser).length > 0) break;
        }
        continue;
      }
      if (step.text === '') {
        this.warn(
          `warning: test case '${testCase.name}' has a user step without text (${testCase.file}:${step.line ?? '?'}); skipped`,
        );
        continue;
      }
      lastUser = i;
      const stepMetadata = step.metadata ? suite.metadata.get(step.metadata)?.values : null;
      const metadata = this.mergeMetadata(
        testCase,
        step,
        caseMetadata ?? null,
        stepMetadata ?? null,
      );
      try {
        await this.runtime.handleMessage({
          text: step.text,
          senderId: id,
          inputChannel: 'e2e',
          output: new CollectingOutputChannel(),
          metadata,
        });
      } catch (error) {
        this.warn(
          `error: test case '${testCase.name}': the message '${step.text}' failed: ${(error as Error).message}`,
        );
      }
      turns.set(i, await next());
      // The turn's events after the user message itself, as Rasa's assertions see them.
      assertionTurns.set(
        i,
        assertionEventsOf(latestRaw).filter((e, j) => j > 0 || e.type !== 'user'),
      );
    }
    const result = evaluateE2eTestCase(testCase, { before, turns, stepsRun, assertionTurns });
    for (const reason of result.skipped ?? []) {
      this.warn(`warning: test case '${testCase.name}': assertion ${reason}`);
    }
    return result;
  }

  private async events(id: string): Promise<Record<string, unknown>[]> {
    const state = await this.runtime.tracker({
      conversationId: id,
      verbosity: EventVerbosity.ALL,
      until: null,
    });
    return (state.events ?? []) as Record<string, unknown>[];
  }

  /** The test case's metadata with the step's over it (Rasa warns about the keys overridden). */
  private mergeMetadata(
    testCase: E2eTestCase,
    step: Extract<E2eStep, { kind: 'user' }>,
    caseMetadata: JsonObject | null,
    stepMetadata: JsonObject | null,
  ): JsonObject | null {
    if (caseMetadata === null) return stepMetadata;
    if (stepMetadata === null) return caseMetadata;
    const overridden = Object.keys(stepMetadata).filter((k) => Object.hasOwn(caseMetadata, k));
    if (overridden.length > 0) {
      this.warn(
        `warning: metadata ${JSON.stringify(overridden)} exist in both the test case '${testCase.name}' and the user step '${step.text}'; the user step's values are used`,
      );
    }
    return { ...caseMetadata, ...stepMetadata };
  }
}

function detail(data: Record<string, unknown> | undefined): string {
  if (data === undefined || Object.keys(data).length === 0) return '';
  return ` ${JSON.stringify(data)}`;
}

// --- Report ----------------------------------------------------------------------------------

const WIDTH = 80;

/** Rasa's `pad`: the text centred in a line of `char`. */
function pad(text: string, char = '='): string {
  const room = Math.max(WIDTH - text.length - 2, 6);
  const left = Math.floor(room / 2);
  return `${char.repeat(left)} ${text} ${char.repeat(room - left)}`;
}

function where(t: E2eTestCase): string {
  return `${t.file}:${t.line ?? ''}`;
}

/** The report `rasa test e2e` prints: failures with their diffs, a summary, the final line. */
export function report(
  passed: readonly E2eTestResult[],
  failed: readonly E2eTestResult[],
  stoppedEarly: boolean,
): string {
  const lines: string[] = [];
  if (failed.length > 0) {
    lines.push('', pad('FAILURES'));
    for (const f of failed) {
      lines.push(pad(`'${f.testCase.name}' in ${where(f.testCase)} failed`, '-'), '');
      lines.push(`Mismatch starting at ${f.testCase.file}:${f.errorLine ?? ''}:`, '');
      lines.push(...f.difference, '');
    }
  }
  lines.push(pad('short test summary info'));
  for (const f of failed) lines.push(`FAILED ${f.testCase.file}::${f.testCase.name}`);
  if (stoppedEarly) lines.push(pad('stopping after 1 failure', '!'));
  else if (passed.length + failed.length === 0) {
    lines.push(
      pad('no test cases found', '!'),
      'Write e2e test cases in a YAML file with a `test_cases:` key, e.g. tests/e2e_test_cases.yml:',
      '',
      '  test_cases:',
      '    - test_case: greet',
      '      steps:',
      '        - user: "hello there!"',
      '        - bot: "Hey! How are you?"',
      '',
      'and run them with: parley test e2e <path-to-test-cases>',
    );
  }
  lines.push(pad(`${failed.length} failed, ${passed.length} passed`));
  return `${lines.join('\n')}\n`;
}

// --- Result files ----------------------------------------------------------------------------

/** Rasa's `TestResult.as_dict()`. */
function resultEntry(r: E2eTestResult): JsonObject {
  const entry: JsonObject = {
    name: r.testCase.name,
    pass_status: r.passed,
    expected_steps: r.testCase.steps.map(stepAsDict),
  };
  if (r.errorLine !== undefined) entry.error_path = `${r.testCase.file}:${r.errorLine}`;
  if (r.difference.length > 0) entry.difference = r.difference;
  return entry;
}

function stepAsDict(step: E2eStep): JsonObject {
  switch (step.kind) {
    case 'user':
      return step.metadata ? { user: step.text, metadata: step.metadata } : { user: step.text };
    case 'bot':
      return { bot: step.text };
    case 'utter':
      return { utter: step.name };
    case 'slot_was_set':
    case 'slot_was_not_set':
      return {
        [step.kind]: step.hasValue ? { [step.slot]: step.value as JsonObject } : step.slot,
      };
  }
}

async function writeResults(
  out: string,
  passed: readonly E2eTestResult[],
  failed: readonly E2eTestResult[],
): Promise<string[]> {
  await mkdir(out, { recursive: true });
  const json = join(out, 'e2e_results.json');
  await writeFile(
    json,
    `${JSON.stringify(
      {
        passed: passed.map(resultEntry),
        failed: failed.map(resultEntry),
      },
      null,
      2,
    )}\n`,
  );
  const files = [json];
  for (const [status, list] of [
    ['passed', passed],
    ['failed', failed],
  ] as const) {
    const file = join(out, `e2e_results_${status}.yml`);
    await writeFile(file, stringify({ test_results: list.map(resultEntry) }));
    files.push(file);
  }
  return files;
}
