import { DialogueError } from 'src/core/errors/dialogue-error';
import { type JsonObject } from 'src/core/events/event-base';
import {
  deref,
  lineOf,
  parseYamlSource,
  toPlain,
  yamlError,
  type YamlSource,
} from 'src/core/training-data/yaml-source';
import { isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import {
  CONTINUE_STEP_PREFIX,
  END_STEP,
  START_STEP,
  type ConditionalBranch,
  type ElseBranch,
  type Flow,
  type FlowStep,
  type NluTrigger,
  type SlotRejection,
  type StepNext,
} from './flow';
import { FlowsList } from './flows-list';
import { assertValidFlowsStructure, flowStructureErrors } from './flows-validation';

/**
 * Reads Rasa Pro flows files (a top-level `flows:` mapping of flow id → flow) into the flow
 * model: the JSON schema of Rasa's flows files checked on the YAML nodes (messages name file,
 * line and flow), default step ids given by the pre-order walk, implicit `next` links made
 * explicit, and the structural checks of a single flow run (all fatal, `TRAINING_DATA.INVALID`).
 */

const FLOW_KEYS = [
  'description',
  'if',
  'always_include_in_prompt',
  'name',
  'nlu_trigger',
  'file_path',
  'steps',
  'persisted_slots',
  'run_pattern_completed',
  'translation',
];
const STEP_TYPE_KEYS = ['action', 'collect', 'link', 'call', 'set_slots', 'noop'] as const;
type StepKind = (typeof STEP_TYPE_KEYS)[number];
const COMMON_STEP_KEYS = ['id', 'next', 'description', 'metadata'];
/** Keys action and collect steps accept (other step kinds ignore unknown keys, as Rasa does). */
const CLOSED_STEP_KEYS: Partial<Record<StepKind, readonly string[]>> = {
  action: [...COMMON_STEP_KEYS, 'action'],
  collect: [
    ...COMMON_STEP_KEYS,
    'collect',
    'utter',
    'ask_before_filling',
    'reset_after_flow_ends',
    'rejections',
  ],
};

/** A step while reading: ids and links still being resolved. */
interface RawStep {
  kind: StepKind;
  value: string;
  givenId: string | null;
  id: string;
  next: RawNext | null;
  description: string | null;
  metadata: JsonObject | null;
  collect?: {
    utter: string | null;
    askBeforeFilling: boolean;
    resetAfterFlowEnds: boolean;
    rejections: SlotRejection[];
  };
  slots?: { name: string; value: unknown }[];
}

type RawBranchTarget = string | RawStep[];
type RawNext = string | ({ if: string; then: RawBranchTarget } | { else: RawBranchTarget })[];

interface Ctx {
  readonly source: YamlSource;
  readonly flowId: string;
}

function fail(ctx: Ctx, node: unknown, problem: string): never {
  yamlError(ctx.source, lineOfAny(ctx.source, node), `flow '${ctx.flowId}': ${problem}`);
}

function lineOfAny(source: YamlSource, node: unknown): number | undefined {
  return isMap(node) || isSeq(node) || isScalar(node) ? lineOf(source, node) : undefined;
}

/** How a value shows in a schema message (Rasa's humanised jsonschema errors). */
function found(node: unknown): string {
  if (isMap(node)) return 'a dictionary';
  if (isSeq(node)) return 'a list';
  const v: unknown = isScalar(node) ? node.value : node;
  if (v === null || v === undefined) return '`None`';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return `\`${v}\``;
  return `\`${JSON.stringify(v)}\``;
}

function isNull(node: unknown): boolean {
  return node === undefined || node === null || (isScalar(node) && node.value === null);
}

function scalarOf(node: unknown): unknown {
  return isScalar(node) ? node.value : undefined;
}

function stringValue(ctx: Ctx, node: unknown, what: string): string {
  const v = scalarOf(node);
  if (typeof v === 'string') return v;
  fail(ctx, node, `${what}: Found ${found(node)} but expected a string.`);
}

function boolValue(ctx: Ctx, node: unknown, what: string): boolean {
  const v = scalarOf(node);
  if (typeof v === 'boolean') return v;
  fail(ctx, node, `${what}: Found ${found(node)} but expected a boolean.`);
}

/** A condition: a string, or a YAML boolean stringified. */
function conditionValue(ctx: Ctx, node: unknown, what: string): string {
  const v = scalarOf(node);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  fail(ctx, node, `${what}: Found ${found(node)} but expected a string or a boolean.`);
}

function mapEntries(ctx: Ctx, map: YAMLMap): { key: string; keyNode: unknown; value: unknown }[] {
  return map.items.map((pair) => {
    const key = scalarOf(pair.key);
    if (typeof key !== 'string') fail(ctx, pair.key, 'keys must be strings');
    return { key, keyNode: pair.key, value: deref(ctx.source, pair.value) };
  });
}

function checkKeys(
  ctx: Ctx,
  entries: readonly { key: string; keyNode: unknown }[],
  allowed: readonly string[],
): void {
  const extra = entries.filter((e) => !allowed.includes(e.key));
  if (extra.length > 0) {
    const list = extra.map((e) => `'${e.key}'`).join(', ');
    const verb = extra.length === 1 ? 'was' : 'were';
    fail(
      ctx,
      extra[0]?.keyNode,
      `Additional properties are not allowed (${list} ${verb} unexpected)`,
    );
  }
}

/**
 * Reads one flows YAML document. A document without a `flows` key (or with `flows:` empty)
 * holds no flows. Each flow's `filePath` is `source`.
 */
export function readFlowsYaml(text: string, source: string): Flow[] {
  const yaml = parseYamlSource(text, source);
  const root = deref(yaml, yaml.doc.contents);
  if (isNull(root)) return [];
  if (!isMap(root)) yamlError(yaml, lineOfAny(yaml, root), 'the file must be a mapping');
  const flowsNode = deref(yaml, root.get('flows', true));
  if (isNull(flowsNode)) return [];
  if (!isMap(flowsNode)) {
    yamlError(
      yaml,
      lineOfAny(yaml, flowsNode),
      `flows: Found ${found(flowsNode)} but expected a dictionary of flows.`,
    );
  }
  const flows: Flow[] = [];
  const seen = new Set<string>();
  for (const pair of flowsNode.items) {
    const id = scalarOf(pair.key);
    if (typeof id !== 'string' && typeof id !== 'number') {
      yamlError(yaml, lineOfAny(yaml, pair.key), 'flow ids must be strings');
    }
    const flowId = String(id);
    if (seen.has(flowId)) {
      throw duplicateFlowError(flowId, source, source);
    }
    seen.add(flowId);
    const flow = readFlow({ source: yaml, flowId }, deref(yaml, pair.value), pair.key);
    const problems = flowStructureErrors(flow);
    if (problems.length > 0) {
      yamlError(yaml, lineOfAny(yaml, pair.key), problems[0] as string);
    }
    flows.push(flow);
  }
  return flows;
}

/**
 * Reads every flows file (in order) and checks what spans flows: ids unique across files
 * (Rasa's message), one flow per trigger intent, link/call targets and pattern rules.
 */
export function readFlowsFiles(files: readonly { path: string; text: string }[]): Flow[] {
  const all: Flow[] = [];
  const fileOf = new Map<string, string>();
  for (const file of files) {
    for (const flow of readFlowsYaml(file.text, file.path)) {
      const first = fileOf.get(flow.id);
      if (first !== undefined) throw duplicateFlowError(flow.id, first, file.path);
      fileOf.set(flow.id, file.path);
      all.push(flow);
    }
  }
  assertValidFlowsStructure(new FlowsList(all));
  return all;
}

function duplicateFlowError(flowId: string, first: string, second: string): DialogueError {
  const where =
    first === second
      ? `is used twice in \`${first}\``
      : `is used in both \`${first}\` and \`${second}\``;
  const message = `Flow '${flowId}' ${where}. Please make sure flow IDs are unique across all files.`;
  return new DialogueError('TRAINING_DATA.INVALID', message, {
    file: second,
    flow: flowId,
    problem: message,
  });
}

function readFlow(ctx: Ctx, node: unknown, keyNode: unknown): Flow {
  if (!isMap(node)) {
    fail(
      ctx,
      isNull(node) ? keyNode : node,
      `Found ${found(node)} but expected a dictionary with flow properties.`,
    );
  }
  const entries = mapEntries(ctx, node);
  checkKeys(ctx, entries, FLOW_KEYS);
  const get = (key: string): unknown => entries.find((e) => e.key === key)?.value;
  const has = (key: string): boolean => entries.some((e) => e.key === key);
  for (const key of ['steps', 'description']) {
    if (!has(key)) fail(ctx, node, `'${key}' is a required property`);
  }
  const description = stringValue(ctx, get('description'), 'description');
  const name = has('name') ? stringValue(ctx, get('name'), 'name') : null;
  const guard = has('if') ? conditionValue(ctx, get('if'), 'if') : null;
  const always = has('always_include_in_prompt')
    ? boolValue(ctx, get('always_include_in_prompt'), 'always_include_in_prompt')
    : null;
  const runPatternCompleted = has('run_pattern_completed')
    ? boolValue(ctx, get('run_pattern_completed'), 'run_pattern_completed')
    : true;
  const filePath = has('file_path') ? stringValue(ctx, get('file_path'), 'file_path') : null;
  const persistedSlots = has('persisted_slots') ? readPersisted(ctx, get('persisted_slots')) : [];
  const nluTrigger = has('nlu_trigger') ? readTriggers(ctx, get('nlu_trigger')) : [];
  if (has('translation') && !isMap(get('translation')) && !isNull(get('translation'))) {
    fail(
      ctx,
      get('translation'),
      `translation: Found ${found(get('translation'))} but expected a dictionary.`,
    );
  }

  const stepsNode = get('steps');
  if (!isSeq(stepsNode)) {
    fail(ctx, stepsNode ?? node, `steps: Found ${found(stepsNode)} but expected a list of steps.`);
  }
  const raw = readSteps(ctx, stepsNode);
  assignIds(ctx.flowId, raw);
  resolveImplicitNext(raw, true);
  const ids = new Set(allRaw(raw).map((s) => s.id));
  const steps = raw.map((s) => buildStep(ctx.flowId, s, ids));

  return {
    id: ctx.flowId,
    name: name ?? defaultFlowName(ctx.flowId),
    description,
    guard,
    nluTrigger,
    alwaysIncludeInPrompt: always,
    persistedSlots,
    runPatternCompleted,
    steps,
    filePath: filePath ?? ctx.source.file,
    builtIn: false,
    nameGiven: name !== null,
  };
}

/** Rasa's default flow name: the id with `_` and `-` turned into spaces. */
export function defaultFlowName(flowId: string): string {
  return flowId.replace(/[_-]/g, ' ');
}

function readPersisted(ctx: Ctx, node: unknown): string[] {
  if (!isSeq(node)) {
    fail(ctx, node, `persisted_slots: Found ${found(node)} but expected a list of slot names.`);
  }
  return node.items.map((item) => stringValue(ctx, deref(ctx.source, item), 'persisted_slots'));
}

function readTriggers(ctx: Ctx, node: unknown): NluTrigger[] {
  if (!isSeq(node)) {
    fail(ctx, node, `nlu_trigger: Found ${found(node)} but expected a list of nlu triggers.`);
  }
  if (node.items.length === 0) fail(ctx, node, 'nlu_trigger: [] should be non-empty');
  return node.items.map((raw): NluTrigger => {
    const item = deref(ctx.source, raw);
    const intent = isMap(item) ? deref(ctx.source, item.get('intent', true)) : undefined;
    const invalid = (): never =>
      fail(
        ctx,
        item,
        "Not a valid 'nlu_trigger' definition. Expected intent trigger or simple intent trigger.",
      );
    if (!isMap(item) || intent === undefined) return invalid();
    if (isScalar(intent) && typeof intent.value === 'string') {
      if (item.items.length !== 1) return invalid();
      return { intent: intent.value, confidenceThreshold: 0 };
    }
    if (!isMap(intent)) return invalid();
    const entries = mapEntries(ctx, intent);
    checkKeys(ctx, entries, ['name', 'confidence_threshold']);
    const name = entries.find((e) => e.key === 'name');
    if (name === undefined) fail(ctx, intent, "nlu_trigger: 'name' is a required property");
    const threshold = entries.find((e) => e.key === 'confidence_threshold');
    let confidence = 0;
    if (threshold !== undefined) {
      const v = scalarOf(threshold.value);
      if (typeof v !== 'number') {
        fail(
          ctx,
          threshold.value,
          `confidence_threshold: Found ${found(threshold.value)} but expected a number.`,
        );
      }
      confidence = v;
    }
    return {
      intent: stringValue(ctx, name.value, 'nlu_trigger name'),
      confidenceThreshold: confidence,
    };
  });
}

function readSteps(ctx: Ctx, seq: { items: unknown[] }): RawStep[] {
  return seq.items.map((item) => readStep(ctx, deref(ctx.source, item)));
}

function readStep(ctx: Ctx, node: unknown): RawStep {
  if (!isMap(node)) fail(ctx, node, `steps: Found ${found(node)} but expected a dictionary.`);
  const entries = mapEntries(ctx, node);
  const get = (key: string): unknown => entries.find((e) => e.key === key)?.value;
  const has = (key: string): boolean => entries.some((e) => e.key === key);
  const kinds = STEP_TYPE_KEYS.filter((k) => has(k));
  if (kinds.length === 0) {
    const shown = JSON.stringify(toPlain(ctx.source, node));
    fail(
      ctx,
      node,
      `Failed to parse step from json. Unknown type for ${shown}. At least one of the ` +
        `following properties is required: ${STEP_TYPE_KEYS.join(', ')}`,
    );
  }
  if (kinds.length > 1) {
    fail(
      ctx,
      node,
      "Not a valid 'steps' definition. Expected action step or call step or collect step or " +
        'link step or slot set step.',
    );
  }
  const kind = kinds[0] as StepKind;
  const closed = CLOSED_STEP_KEYS[kind];
  if (closed) checkKeys(ctx, entries, closed);
  if (kind === 'noop' && !has('next')) fail(ctx, node, "'next' is a required property");

  const givenId = has('id') ? stringValue(ctx, get('id'), 'id') : null;
  const description = has('description')
    ? stringValue(ctx, get('description'), 'description')
    : null;
  let metadata: JsonObject | null = null;
  if (has('metadata') && !isNull(get('metadata'))) {
    if (!isMap(get('metadata'))) {
      fail(
        ctx,
        get('metadata'),
        `metadata: Found ${found(get('metadata'))} but expected a dictionary.`,
      );
    }
    metadata = toPlain(ctx.source, get('metadata')) as JsonObject;
  }
  metadata = { ...(metadata ?? {}), line_numbers: lineNumbers(ctx.source, node) };
  const next = has('next') ? readNext(ctx, get('next')) : null;

  const step: RawStep = {
    kind,
    value: '',
    givenId,
    id: '',
    next,
    description,
    metadata,
  };
  const typeNode = get(kind);
  switch (kind) {
    case 'action':
      step.value = stringValue(ctx, typeNode, 'action');
      break;
    case 'collect': {
      step.value = stringValue(ctx, typeNode, 'collect');
      step.collect = {
        utter: has('utter') ? stringValue(ctx, get('utter'), 'utter') : null,
        askBeforeFilling: has('ask_before_filling')
          ? boolValue(ctx, get('ask_before_filling'), 'ask_before_filling')
          : false,
        resetAfterFlowEnds: has('reset_after_flow_ends')
          ? boolValue(ctx, get('reset_after_flow_ends'), 'reset_after_flow_ends')
          : true,
        rejections: has('rejections') ? readRejections(ctx, get('rejections')) : [],
      };
      break;
    }
    case 'link':
    case 'call':
      step.value = stringValue(ctx, typeNode, kind);
      break;
    case 'set_slots':
      step.slots = readSetSlots(ctx, typeNode);
      break;
    case 'noop':
      break;
  }
  return step;
}

/** Rasa's `line_numbers` step metadata: first line, then the line the node's end mark is on. */
function lineNumbers(source: YamlSource, node: Node): string {
  const range = node.range;
  if (!range) return '';
  const start = source.lines.linePos(range[0]).line;
  const endPos = source.lines.linePos(range[2]);
  const end = endPos.col === 1 ? endPos.line - 1 : endPos.line;
  return `${start}-${Math.max(start, end)}`;
}

function readRejections(ctx: Ctx, node: unknown): SlotRejection[] {
  if (!isSeq(node)) {
    fail(ctx, node, `rejections: Found ${found(node)} but expected a list of rejections.`);
  }
  return node.items.map((raw) => {
    const item = deref(ctx.source, raw);
    if (!isMap(item)) {
      fail(ctx, item, `rejections: Found ${found(item)} but expected a dictionary.`);
    }
    const entries = mapEntries(ctx, item);
    const get = (key: string): unknown => entries.find((e) => e.key === key)?.value;
    for (const key of ['if', 'utter']) {
      if (!entries.some((e) => e.key === key)) fail(ctx, item, `'${key}' is a required property`);
    }
    return {
      if: conditionValue(ctx, get('if'), 'rejections if'),
      utter: stringValue(ctx, get('utter'), 'rejections utter'),
    };
  });
}

function readSetSlots(ctx: Ctx, node: unknown): { name: string; value: unknown }[] {
  if (!isSeq(node)) {
    fail(ctx, node, `set_slots: Found ${found(node)} but expected a list of slot sets.`);
  }
  const out: { name: string; value: unknown }[] = [];
  for (const raw of node.items) {
    const item = deref(ctx.source, raw);
    if (!isMap(item)) fail(ctx, item, `set_slots: Found ${found(item)} but expected a dictionary.`);
    for (const e of mapEntries(ctx, item)) {
      out.push({ name: e.key, value: toPlain(ctx.source, e.value) });
    }
  }
  return out;
}

function readNext(ctx: Ctx, node: unknown): RawNext {
  const v = scalarOf(node);
  if (typeof v === 'string') return v;
  if (!isSeq(node)) {
    fail(ctx, node, "Not a valid 'next' definition. Expected list of conditions or step id.");
  }
  return node.items.map((raw) => {
    const item = deref(ctx.source, raw);
    const invalid = (): never =>
      fail(ctx, item, "Not a valid 'next' definition. Expected else block or if-then block.");
    if (!isMap(item)) return invalid();
    const entries = mapEntries(ctx, item);
    const get = (key: string): unknown => entries.find((e) => e.key === key)?.value;
    const has = (key: string): boolean => entries.some((e) => e.key === key);
    const ifThen = has('if') && has('then');
    if (ifThen === has('else')) return invalid();
    if (ifThen) {
      return {
        if: conditionValue(ctx, get('if'), 'if'),
        then: readTarget(ctx, get('then'), 'then'),
      };
    }
    return { else: readTarget(ctx, get('else'), 'else') };
  });
}

function readTarget(ctx: Ctx, node: unknown, what: string): RawBranchTarget {
  const v = scalarOf(node);
  if (typeof v === 'string') return v;
  if (isSeq(node)) return readSteps(ctx, node);
  fail(ctx, node, `Not a valid '${what}' definition. Expected list of steps or step id.`);
}

function branchTargets(next: RawNext | null): RawStep[][] {
  if (next === null || typeof next === 'string') return [];
  const out: RawStep[][] = [];
  for (const b of next) {
    const target = 'then' in b ? b.then : b.else;
    if (Array.isArray(target)) out.push(target);
  }
  return out;
}

function allRaw(steps: readonly RawStep[]): RawStep[] {
  const out: RawStep[] = [];
  const walk = (list: readonly RawStep[]): void => {
    for (const s of list) {
      out.push(s);
      for (const t of branchTargets(s.next)) walk(t);
    }
  };
  walk(steps);
  return out;
}

function postfix(step: RawStep): string {
  switch (step.kind) {
    case 'action':
      return step.value;
    case 'collect':
      return `collect_${step.value}`;
    case 'link':
      return `link_${step.value}`;
    case 'call':
      return `call_${step.value}`;
    case 'set_slots':
      return 'set_slots';
    case 'noop':
      return 'noop';
  }
}

/** Default ids `{flow_id}_{idx}_{postfix}`, idx counted by the pre-order walk. */
function assignIds(flowId: string, steps: readonly RawStep[]): void {
  allRaw(steps).forEach((s, idx) => {
    s.id = s.givenId ?? `${flowId}_${idx}_${postfix(s)}`;
  });
}

/** Omitted `next`: the following sibling; the last top-level step goes to `END`. */
function resolveImplicitNext(steps: readonly RawStep[], root: boolean): void {
  steps.forEach((s, i) => {
    if (s.next === null && s.kind !== 'link') {
      const following = steps[i + 1];
      if (following) s.next = following.id;
      else if (root) s.next = END_STEP;
    }
    for (const t of branchTargets(s.next)) resolveImplicitNext(t, false);
  });
}

/**
 * The step id a reference means: the id itself, or — for the older default ids
 * `{idx}_{postfix}` (before flow ids prefixed them) — the flow-prefixed id when only that exists.
 */
export function resolveStepReference(
  flowId: string,
  reference: string,
  stepIds: ReadonlySet<string>,
): string {
  if (
    reference === START_STEP ||
    reference === END_STEP ||
    reference.startsWith(CONTINUE_STEP_PREFIX) ||
    stepIds.has(reference)
  ) {
    return reference;
  }
  const prefixed = `${flowId}_${reference}`;
  return /^\d+_/.test(reference) && stepIds.has(prefixed) ? prefixed : reference;
}

/** A step of a flow by id, accepting the older `{idx}_{postfix}` default ids. */
export function findStep(flow: Flow, stepId: string): FlowStep | undefined {
  const all = new FlowsList([flow]);
  return all.step(flow.id, stepId) ?? all.step(flow.id, `${flow.id}_${stepId}`);
}

function buildNext(
  flowId: string,
  next: RawNext | null,
  ids: ReadonlySet<string>,
): StepNext | null {
  if (next === null) return null;
  if (typeof next === 'string') return resolveStepReference(flowId, next, ids);
  const target = (t: RawBranchTarget): string | readonly FlowStep[] =>
    typeof t === 'string'
      ? resolveStepReference(flowId, t, ids)
      : t.map((s) => buildStep(flowId, s, ids));
  return next.map((b): ConditionalBranch | ElseBranch =>
    'then' in b ? { if: b.if, then: target(b.then) } : { else: target(b.else) },
  );
}

function buildStep(flowId: string, s: RawStep, ids: ReadonlySet<string>): FlowStep {
  const base = {
    id: s.id,
    idGiven: s.givenId !== null,
    next: buildNext(flowId, s.next, ids),
    description: s.description,
    metadata: s.metadata,
  };
  switch (s.kind) {
    case 'action':
      return { ...base, kind: 'action', action: s.value };
    case 'collect': {
      const c = s.collect as NonNullable<RawStep['collect']>;
      return {
        ...base,
        kind: 'collect',
        collect: s.value,
        utter: c.utter ?? `utter_ask_${s.value}`,
        collectAction: `action_ask_${s.value}`,
        askBeforeFilling: c.askBeforeFilling,
        resetAfterFlowEnds: c.resetAfterFlowEnds,
        rejections: c.rejections,
      };
    }
    case 'set_slots':
      return { ...base, kind: 'set_slots', slots: s.slots ?? [] };
    case 'link':
      return { ...base, kind: 'link', link: s.value };
    case 'call':
      return { ...base, kind: 'call', call: s.value };
    case 'noop':
      return { ...base, kind: 'noop' };
  }
}
