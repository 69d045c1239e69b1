import { runAssertions, transcriptOf, type AssertionEvent } from './e2e-assertions';
import { type E2eStep, type E2eTestCase } from './e2e-test-cases';

/** Rasa's placeholders in a diff when the bot said nothing / set no such slot. */
export const NO_BOT_RESPONSE = '* No Bot Response *';
export const NO_SLOT_SET = '* No Slot Set *';

/** The events of a conversation an e2e test case is checked against (Rasa's wire names). */
export type E2eActualEvent =
  | { readonly type: 'user'; readonly text: string | null }
  | { readonly type: 'bot'; readonly text: string | null; readonly utterAction: string | null }
  | { readonly type: 'slot'; readonly name: string; readonly value: unknown };

/**
 * What running a test case produced: the events stored before its first user message (session
 * start, fixtures) and, for every user step run (by its index in `steps`), the events of its turn.
 */
export interface E2eRun {
  readonly before: readonly E2eActualEvent[];
  readonly turns: ReadonlyMap<number, readonly E2eActualEvent[]>;
  /** How many steps were run (fail-fast stops a test case at its first failing step). */
  readonly stepsRun: number;
  /** For the user steps run, the events of their turn as `assertions:` see them. */
  readonly assertionTurns?: ReadonlyMap<number, readonly AssertionEvent[]>;
}

export interface E2eTestResult {
  readonly testCase: E2eTestCase;
  readonly passed: boolean;
  /** Line of the first failing step. */
  readonly errorLine: number | undefined;
  /** Expected against actual, Rasa's way: `  ` same, `- ` actual, `+ ` expected. */
  readonly difference: string[];
  /** Assertions not checked, with the reason (LLM-judged ones). */
  readonly skipped?: string[];
}

/** Only the wire events an e2e test looks at (user, bot, slot), in order. */
export function e2eEventsOf(events: readonly Record<string, unknown>[]): E2eActualEvent[] {
  const out: E2eActualEvent[] = [];
  for (const e of events) {
    if (e.event === 'user') {
      out.push({ type: 'user', text: typeof e.text === 'string' ? e.text : null });
    } else if (e.event === 'bot') {
      const metadata = (e.metadata ?? {}) as Record<string, unknown>;
      out.push({
        type: 'bot',
        text: typeof e.text === 'string' ? e.text : null,
        utterAction: typeof metadata.utter_action === 'string' ? metadata.utter_action : null,
      });
    } else if (e.event === 'slot' && typeof e.name === 'string') {
      out.push({ type: 'slot', name: e.name, value: e.value ?? null });
    }
  }
  return out;
}

/**
 * Indexes of the failing steps among steps `from` … `to - 1`. A bot, utter or slot step is
 * checked against the events of the latest user turn before it (the events before the first user
 * message when there is none): it passes when one of them matches, in any order — Rasa's rule.
 */
export function findE2eFailures(
  steps: readonly E2eStep[],
  run: E2eRun,
  from = 0,
  to = run.stepsRun,
): number[] {
  let latest = run.before;
  for (let i = from - 1; i >= 0; i--) {
    const turn = run.turns.get(i);
    if (steps[i]?.kind === 'user' && turn) {
      latest = turn;
      break;
    }
  }
  const failures: number[] = [];
  for (let i = from; i < Math.min(to, steps.length); i++) {
    const step = steps[i] as E2eStep;
    if (step.kind === 'user') {
      latest = run.turns.get(i) ?? latest;
      continue;
    }
    const found = latest.some((e) => matches(step, e));
    if (step.kind === 'slot_was_not_set' ? found : !found) failures.push(i);
  }
  return failures;
}

/** Whether a test case passed, and Rasa's diff of the conversation up to the last failing step. */
export function evaluateE2eTestCase(testCase: E2eTestCase, run: E2eRun): E2eTestResult {
  const failures = findE2eFailures(testCase.steps, run);
  if (failures.length === 0) return evaluateAssertions(testCase, run);
  return {
    testCase,
    passed: false,
    errorLine: testCase.steps[failures[0]!]?.line,
    difference: diffOf(testCase.steps, run, new Set(failures)),
  };
}

/**
 * The `assertions:` of the user steps run, in order, each against the events of its turn; the
 * first failing one fails the test case (its diff: the error and what happened in the turn).
 */
function evaluateAssertions(testCase: E2eTestCase, run: E2eRun): E2eTestResult {
  const skipped: string[] = [];
  for (let i = 0; i < Math.min(run.stepsRun, testCase.steps.length); i++) {
    const step = testCase.steps[i] as E2eStep;
    if (step.kind !== 'user' || step.assertions.length === 0) continue;
    const turn = run.assertionTurns?.get(i);
    if (turn === undefined) continue;
    const outcome = runAssertions(step.assertions, turn, testCase.assertionOrderEnabled, sameValue);
    skipped.push(...outcome.skipped);
    if (outcome.failure !== null) {
      return {
        testCase,
        passed: false,
        errorLine: outcome.failure.line,
        difference: [
          `Assertion type '${outcome.failure.assertion.kind}' failed with this error message: ${outcome.failure.message}`,
          'Actual events transcript:',
          ...transcriptOf(turn).map((l) => `  ${l}`),
        ],
        ...(skipped.length > 0 ? { skipped } : {}),
      };
    }
  }
  return {
    testCase,
    passed: true,
    errorLine: undefined,
    difference: [],
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

function matches(step: E2eStep, event: E2eActualEvent): boolean {
  switch (step.kind) {
    case 'bot':
      return event.type === 'bot' && event.text === step.text;
    case 'utter':
      return event.type === 'bot' && event.utterAction === step.name;
    case 'slot_was_set':
    case 'slot_was_not_set':
      return (
        event.type === 'slot' &&
        event.name === step.slot &&
        (!step.hasValue || sameValue(event.value, step.value))
      );
    case 'user':
      return false;
  }
}

/** Equality of JSON values (YAML's `1` and a slot's `1.0` are the same number). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) {
    return (a ?? null) === (b ?? null);
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => sameValue(x, b[i]))
    );
  }
  if (typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.hasOwn(b, k) &&
          sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

/**
 * The conversation as expected and as it happened, side by side, up to the last failing step:
 * each step that passed shows once; a failing step shows the expected line (`+`) and what the
 * bot did instead (`-`): the first of the turn's bot messages no step of the turn matches, or
 * the slot's actual value. Matched events are used up, so each shows at most once.
 */
function diffOf(steps: readonly E2eStep[], run: E2eRun, failures: ReadonlySet<number>): string[] {
  let latest = [...run.before];
  const lines: string[] = [];
  const last = Math.max(...failures);
  const take = (event: E2eActualEvent | undefined): void => {
    if (event !== undefined) latest.splice(latest.indexOf(event), 1);
  };
  for (let i = 0; i <= last; i++) {
    const step = steps[i] as E2eStep;
    if (step.kind === 'user') {
      const turn = run.turns.get(i);
      if (!turn) continue;
      latest = [...turn];
      const said = turn.find((e) => e.type === 'user');
      lines.push(`  user: ${said?.type === 'user' ? (said.text ?? step.text) : step.text}`);
      continue;
    }
    if (failures.has(i)) {
      const [expected, actual] = failedLines(step, latest, steps, i, take);
      if (expected === actual) lines.push(`  ${expected}`);
      else lines.push(`- ${actual}`, `+ ${expected}`);
      continue;
    }
    const matched = latest.find((e) => matches(step, e));
    switch (step.kind) {
      case 'bot':
      case 'utter':
        take(matched);
        lines.push(`  bot: ${step.kind === 'bot' ? step.text : step.name}`);
        break;
      case 'slot_was_set': {
        take(matched);
        const value =
          matched?.type === 'slot' && matched.value !== null ? `: ${typed(matched.value)}` : '';
        lines.push(`  slot_was_set: ${step.slot}${value}`);
        break;
      }
      case 'slot_was_not_set':
        lines.push(`  ${notSetLine(step)}`);
        break;
    }
  }
  return lines;
}

function failedLines(
  step: Exclude<E2eStep, { kind: 'user' }>,
  latest: E2eActualEvent[],
  steps: readonly E2eStep[],
  index: number,
  take: (event: E2eActualEvent | undefined) => void,
): [expected: string, actual: string] {
  if (step.kind === 'bot' || step.kind === 'utter') {
    // The turn's bot steps (this one up to the next user step) claim their messages; the first
    // message none of them claims is what the bot said instead.
    const turnSteps: E2eStep[] = [];
    for (let j = index; j < steps.length && steps[j]?.kind !== 'user'; j++) {
      const s = steps[j] as E2eStep;
      if (s.kind === 'bot' || s.kind === 'utter') turnSteps.push(s);
    }
    const unclaimed = latest.find((e) => e.type === 'bot' && !turnSteps.some((s) => matches(s, e)));
    take(unclaimed);
    const expected = `bot: ${step.kind === 'bot' ? step.text : step.name}`;
    if (unclaimed?.type !== 'bot') return [expected, NO_BOT_RESPONSE];
    return [
      expected,
      `bot: ${step.kind === 'bot' ? unclaimed.text : (unclaimed.utterAction ?? unclaimed.text)}`,
    ];
  }
  const actual = latest.find((e) => e.type === 'slot' && e.name === step.slot);
  take(actual);
  const actualLine =
    actual?.type === 'slot' ? `slot_was_set: ${actual.name}: ${typed(actual.value)}` : NO_SLOT_SET;
  if (step.kind === 'slot_was_set') {
    const expected = `slot_was_set: ${step.slot}${step.hasValue ? `: ${typed(step.value)}` : ''}`;
    return [expected, actualLine];
  }
  return [notSetLine(step), actualLine];
}

function notSetLine(step: { slot: string; hasValue: boolean; value: unknown }): string {
  return `slot_was_not_set: ${step.slot}${step.hasValue ? `: ${pythonText(step.value)}` : ''}`;
}

/** A value with its Python type name, as Rasa prints slot values: `3 (int)`, `True (bool)`. */
function typed(value: unknown): string {
  return `${pythonText(value)} (${pythonType(value)})`;
}

function pythonType(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** `str(value)` in Python for JSON values. */
function pythonText(value: unknown, nested = false): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return nested ? `'${value.replace(/'/g, "\\'")}'` : value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map((v) => pythonText(v, true)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `'${k}': ${pythonText(v, true)}`).join(', ')}}`;
}
