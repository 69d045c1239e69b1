import { type JsonObject } from 'src/core/events/event-base';
import {
  deref,
  entriesOf,
  lineOf,
  parseYamlSource,
  toPlain,
  yamlError,
  type YamlSource,
} from 'src/core/training-data/yaml-source';
import { isMap, isScalar, isSeq } from 'yaml';
import { readAssertions, type E2eAssertion } from './e2e-assertions';

/**
 * Rasa Pro's end-to-end test cases (`rasa test e2e`): YAML files with a `test_cases:` list, and
 * optionally `fixtures:` (named slot values set before a test case starts) and `metadata:`
 * (named dicts sent with user messages).
 *
 * ```yaml
 * fixtures:
 *   - premium:
 *       - membership: gold
 * metadata:
 *   - web: { channel: web }
 * test_cases:
 *   - test_case: happy path
 *     fixtures: [premium]
 *     metadata: web
 *     steps:
 *       - user: "hi"
 *         metadata: web
 *       - bot: "Hello!"            # a bot message with exactly this text
 *       - utter: utter_greet       # a bot message from this response
 *       - slot_was_set:            # the slot was set in this turn (to this value)
 *           - membership
 *           - guests: 2
 *       - slot_was_not_set: [room_type]
 * ```
 *
 * This module only reads: it turns YAML into typed test cases and names the file, line and test
 * case of every problem. Running them is the CLI's job (`parley test e2e`).
 */

/** Rasa's pattern for fixture and metadata names (its e2e test schema). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One step of a test case. `slot_was_set`/`slot_was_not_set` lists become one step per item. */
export type E2eStep =
  | {
      readonly kind: 'user';
      readonly text: string;
      /** Name of a top-level `metadata:` entry sent with this message. */
      readonly metadata: string | null;
      /** Rasa Pro's `assertions:` on the events of this turn (none when absent). */
      readonly assertions: readonly E2eAssertion[];
      readonly line: number | undefined;
    }
  | { readonly kind: 'bot'; readonly text: string; readonly line: number | undefined }
  | { readonly kind: 'utter'; readonly name: string; readonly line: number | undefined }
  | {
      readonly kind: 'slot_was_set' | 'slot_was_not_set';
      readonly slot: string;
      /** Whether a value was given (`- slot: value`) rather than only the name (`- slot`). */
      readonly hasValue: boolean;
      readonly value: unknown;
      readonly line: number | undefined;
    };

export interface E2eTestCase {
  readonly name: string;
  readonly file: string;
  readonly line: number | undefined;
  /** Names of the fixtures applied before the first step, in order. */
  readonly fixtures: readonly string[];
  /** Name of the metadata sent with every user message of the test case. */
  readonly metadata: string | null;
  /** `assertion_order_enabled`: each assertion must match after the previous one's event. */
  readonly assertionOrderEnabled: boolean;
  readonly steps: readonly E2eStep[];
}

/** A named list of slot values (`- name: [{slot: value}, …]`). */
export interface E2eFixture {
  readonly name: string;
  /** The slots in the order written; a slot named twice keeps its last value. */
  readonly slots: ReadonlyArray<readonly [string, unknown]>;
}

export interface E2eMetadata {
  readonly name: string;
  readonly values: JsonObject;
}

/** What one file holds. */
export interface E2eTestFile {
  readonly testCases: E2eTestCase[];
  readonly fixtures: E2eFixture[];
  readonly metadata: E2eMetadata[];
  readonly warnings: string[];
}

/** Every file's test cases, with the fixtures and metadata they may use. */
export interface E2eTestSuite {
  readonly testCases: E2eTestCase[];
  readonly fixtures: ReadonlyMap<string, E2eFixture>;
  readonly metadata: ReadonlyMap<string, E2eMetadata>;
  readonly warnings: string[];
}

/** Whether a YAML text has a top-level `test_cases` key (cheap check before reading). */
export function looksLikeE2eTestFile(text: string): boolean {
  return /^test_cases\s*:/m.test(text);
}

/** Reads one e2e test file; problems throw a DialogueError naming file, line and test case. */
export function readE2eTestCases(text: string, file: string): E2eTestFile {
  const source = parseYamlSource(text, file);
  const root = deref(source, source.doc.contents);
  const warnings: string[] = [];
  const out: E2eTestFile = { testCases: [], fixtures: [], metadata: [], warnings };
  if (root === null || root === undefined) return out;
  if (!isMap(root)) yamlError(source, undefined, 'an e2e test file must be a mapping');
  for (const entry of entriesOf(source, root)) {
    const value = deref(source, entry.value);
    if (value === null || (isScalar(value) && value.value === null)) continue;
    switch (entry.key) {
      case 'test_cases':
        for (const item of seqItems(source, value, '`test_cases`', entry.keyLine)) {
          out.testCases.push(readTestCase(source, item));
        }
        break;
      case 'fixtures':
        for (const item of seqItems(source, value, '`fixtures`', entry.keyLine)) {
          out.fixtures.push(readFixture(source, item));
        }
        break;
      case 'metadata':
        for (const item of seqItems(source, value, '`metadata`', entry.keyLine)) {
          out.metadata.push(readMetadata(source, item));
        }
        break;
      case 'stub_custom_actions':
        warnings.push(
          `${file}:${entry.keyLine ?? '?'}: stub_custom_actions are not supported; custom actions run on the action server of --endpoints`,
        );
        break;
      default:
        // Rasa's schema allows other top-level keys (version, …) and ignores them.
        break;
    }
  }
  return out;
}

/**
 * Joins the files' test cases. A fixture or metadata name defined in several files keeps its
 * first definition (as Rasa). `only` keeps the test cases of that name (`path::name`). Every
 * fixture and metadata a test case names must exist.
 */
export function combineE2eTestFiles(
  files: readonly E2eTestFile[],
  only: string | null = null,
): E2eTestSuite {
  const fixtures = new Map<string, E2eFixture>();
  const metadata = new Map<string, E2eMetadata>();
  const testCases: E2eTestCase[] = [];
  const warnings: string[] = [];
  for (const f of files) {
    for (const x of f.fixtures) if (!fixtures.has(x.name)) fixtures.set(x.name, x);
    for (const m of f.metadata) if (!metadata.has(m.name)) metadata.set(m.name, m);
    testCases.push(...f.testCases.filter((t) => only === null || t.name === only));
    warnings.push(...f.warnings);
  }
  if (only !== null && testCases.length === 0) {
    throw new E2eTestCaseError(`test case does not exist: ${only}`);
  }
  const problems: string[] = [];
  for (const t of testCases) {
    const where = `${t.file}:${t.line ?? '?'}: test case '${t.name}'`;
    for (const name of t.fixtures) {
      if (!fixtures.has(name)) problems.push(`${where}: fixture '${name}' is not defined`);
    }
    if (t.metadata !== null && !metadata.has(t.metadata)) {
      problems.push(`${where}: metadata '${t.metadata}' is not defined`);
    }
    for (const s of t.steps) {
      if (s.kind === 'user' && s.metadata !== null && !metadata.has(s.metadata)) {
        problems.push(
          `${t.file}:${s.line ?? '?'}: test case '${t.name}': metadata '${s.metadata}' of the user step is not defined`,
        );
      }
    }
  }
  if (problems.length > 0) throw new E2eTestCaseError(problems.join('\n'));
  return { testCases, fixtures, metadata, warnings };
}

/** A test suite that cannot run (unknown fixture, metadata or test case). */
export class E2eTestCaseError extends Error {
  override readonly name = 'E2eTestCaseError';
}

/** `path::test case name` → the path and the name (null when not given). */
export function splitTestCasePath(path: string): { path: string; only: string | null } {
  const at = path.indexOf('::');
  if (at < 0) return { path, only: null };
  return { path: path.slice(0, at), only: path.slice(at + 2) };
}

// --- Reading ---------------------------------------------------------------------------------

function seqItems(source: YamlSource, node: unknown, what: string, line?: number): unknown[] {
  if (!isSeq(node)) yamlError(source, nodeLine(source, node) ?? line, `${what} must be a list`);
  return node.items.map((i) => deref(source, i));
}

function nodeLine(source: YamlSource, node: unknown): number | undefined {
  return isMap(node) || isSeq(node) || isScalar(node) ? lineOf(source, node) : undefined;
}

function stringValue(
  source: YamlSource,
  raw: unknown,
  what: string,
  line: number | undefined,
): string {
  const node = deref(source, raw);
  if (isScalar(node) && typeof node.value === 'string') return node.value;
  // Rasa's schema wants strings; numbers and booleans are what YAML makes of unquoted text.
  if (isScalar(node) && (typeof node.value === 'number' || typeof node.value === 'boolean')) {
    return String(node.source ?? node.value);
  }
  yamlError(source, nodeLine(source, node) ?? line, `${what} must be a string`);
}

function readName(source: YamlSource, raw: unknown, what: string, line?: number): string {
  const name = stringValue(source, raw, what, line);
  if (!NAME.test(name)) {
    yamlError(
      source,
      nodeLine(source, deref(source, raw)) ?? line,
      `${what} '${name}' must start with a letter or _ and hold only letters, digits and _`,
    );
  }
  return name;
}

function readTestCase(source: YamlSource, raw: unknown): E2eTestCase {
  if (!isMap(raw)) yamlError(source, nodeLine(source, raw), 'a test case must be a mapping');
  const line = lineOf(source, raw);
  const entries = entriesOf(source, raw);
  const nameEntry = entries.find((e) => e.key === 'test_case');
  if (!nameEntry) yamlError(source, line, 'a test case needs a name (`test_case:`)');
  const name = stringValue(source, nameEntry.value, '`test_case`', nameEntry.keyLine);
  const inCase = (problem: string): string => `test case '${name}': ${problem}`;
  let fixtures: string[] = [];
  let metadata: string | null = null;
  let assertionOrderEnabled = false;
  let steps: E2eStep[] | null = null;
  for (const e of entries) {
    const value = deref(source, e.value);
    switch (e.key) {
      case 'test_case':
        break;
      case 'fixtures':
        if (isScalar(value) && value.value === null) break;
        fixtures = seqItems(source, value, inCase('`fixtures`'), e.keyLine).map((f) =>
          readName(source, f, inCase('fixture name'), e.keyLine),
        );
        break;
      case 'metadata':
        if (isScalar(value) && value.value === null) break;
        metadata = readName(source, value, inCase('metadata name'), e.keyLine);
        break;
      case 'assertion_order_enabled':
        if (!(isScalar(value) && (typeof value.value === 'boolean' || value.value === null))) {
          yamlError(source, e.keyLine, inCase('`assertion_order_enabled` must be true or false'));
        }
        assertionOrderEnabled = value.value === true;
        break;
      case 'steps':
        steps = [];
        for (const step of seqItems(source, value, inCase('`steps`'), e.keyLine)) {
          steps.push(...readStep(source, step, name));
        }
        break;
      default:
        yamlError(source, e.keyLine, inCase(`unknown key '${e.key}'`));
    }
  }
  if (steps === null) yamlError(source, line, inCase('no `steps:`'));
  return { name, file: source.file, line, fixtures, metadata, assertionOrderEnabled, steps };
}

const STEP_KEYS = ['user', 'bot', 'utter', 'slot_was_set', 'slot_was_not_set'] as const;

function readStep(source: YamlSource, raw: unknown, testCase: string): E2eStep[] {
  const inCase = (problem: string): string => `test case '${testCase}': ${problem}`;
  if (!isMap(raw)) yamlError(source, nodeLine(source, raw), inCase('a step must be a mapping'));
  const line = lineOf(source, raw);
  const entries = entriesOf(source, raw);
  const kinds = entries.filter((e) => (STEP_KEYS as readonly string[]).includes(e.key));
  if (kinds.length !== 1) {
    yamlError(
      source,
      line,
      inCase(
        kinds.length === 0
          ? `a step needs one of ${STEP_KEYS.join(', ')}`
          : `a step has more than one of ${STEP_KEYS.join(', ')} (${kinds.map((k) => k.key).join(', ')})`,
      ),
    );
  }
  const kind = kinds[0]!;
  for (const e of entries) {
    if (e.key === kind.key) continue;
    if ((e.key === 'metadata' || e.key === 'assertions') && kind.key === 'user') continue;
    yamlError(source, e.keyLine, inCase(`unknown key '${e.key}' in a ${kind.key} step`));
  }
  switch (kind.key) {
    case 'user': {
      const text = stringValue(source, kind.value, inCase('`user`'), kind.keyLine).trim();
      const meta = entries.find((e) => e.key === 'metadata');
      const metaValue = meta ? deref(source, meta.value) : null;
      const metadata =
        meta && !(isScalar(metaValue) && metaValue.value === null)
          ? readName(source, meta.value, inCase('metadata name'), meta.keyLine)
          : null;
      const assertionsEntry = entries.find((e) => e.key === 'assertions');
      const assertions = assertionsEntry
        ? readAssertions(source, assertionsEntry.value, assertionsEntry.keyLine ?? line, inCase)
        : [];
      return [{ kind: 'user', text, metadata, assertions, line }];
    }
    case 'bot':
      return [
        {
          kind: 'bot',
          text: stringValue(source, kind.value, inCase('`bot`'), kind.keyLine).trim(),
          line,
        },
      ];
    case 'utter':
      return [
        {
          kind: 'utter',
          name: stringValue(source, kind.value, inCase('`utter`'), kind.keyLine),
          line,
        },
      ];
    default:
      return readSlotItems(source, kind.key as 'slot_was_set', kind.value, line, inCase);
  }
}

function readSlotItems(
  source: YamlSource,
  key: 'slot_was_set' | 'slot_was_not_set',
  raw: unknown,
  line: number | undefined,
  inCase: (problem: string) => string,
): E2eStep[] {
  const steps: E2eStep[] = [];
  for (const item of seqItems(source, deref(source, raw), inCase(`\`${key}\``), line)) {
    const itemLine = nodeLine(source, item) ?? line;
    if (isScalar(item)) {
      const slot = stringValue(source, item, inCase(`a \`${key}\` item`), itemLine);
      steps.push({ kind: key, slot, hasValue: false, value: undefined, line: itemLine });
      continue;
    }
    if (!isMap(item) || item.items.length !== 1) {
      yamlError(
        source,
        itemLine,
        inCase(`a \`${key}\` item must be a slot name or one \`slot: value\` pair`),
      );
    }
    const [entry] = entriesOf(source, item);
    steps.push({
      kind: key,
      slot: entry!.key,
      hasValue: true,
      value: toPlain(source, deref(source, entry!.value)),
      line: itemLine,
    });
  }
  return steps;
}

function readFixture(source: YamlSource, raw: unknown): E2eFixture {
  if (!isMap(raw) || raw.items.length !== 1) {
    yamlError(
      source,
      nodeLine(source, raw),
      'a fixture must be one `name: [{slot: value}, …]` pair',
    );
  }
  const [entry] = entriesOf(source, raw);
  const name = readName(source, raw.items[0]!.key, 'fixture name', entry!.keyLine);
  const slots = new Map<string, unknown>();
  const items = seqItems(source, deref(source, entry!.value), `fixture '${name}'`, entry!.keyLine);
  for (const item of items) {
    if (!isMap(item)) {
      yamlError(
        source,
        nodeLine(source, item) ?? entry!.keyLine,
        `fixture '${name}': each item must be a \`slot: value\` mapping`,
      );
    }
    for (const slot of entriesOf(source, item)) {
      slots.set(slot.key, toPlain(source, deref(source, slot.value)));
    }
  }
  return { name, slots: [...slots.entries()] };
}

function readMetadata(source: YamlSource, raw: unknown): E2eMetadata {
  if (!isMap(raw) || raw.items.length !== 1) {
    yamlError(
      source,
      nodeLine(source, raw),
      'a metadata entry must be one `name: {key: value}` pair',
    );
  }
  const [entry] = entriesOf(source, raw);
  const name = readName(source, raw.items[0]!.key, 'metadata name', entry!.keyLine);
  const value = deref(source, entry!.value);
  if (!isMap(value)) {
    yamlError(
      source,
      nodeLine(source, value) ?? entry!.keyLine,
      `metadata '${name}' must be a mapping`,
    );
  }
  return { name, values: toPlain(source, value) as JsonObject };
}
