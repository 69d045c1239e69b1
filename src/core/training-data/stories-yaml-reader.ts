import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { parseAnnotatedText } from 'src/core/training-data/entity-annotation-parser';
import {
  deref,
  lineOf,
  parseYamlSource,
  toPlain,
  yamlError,
  type YamlSource,
} from 'src/core/training-data/yaml-source';
import { isMap, isScalar, isSeq, type Node } from 'yaml';

/** Rasa's placeholder for "any history" in rules (`...`). */
export const RULE_SNIPPET_ACTION_NAME = '...';
/** Value of a slot / loop a rule says must not be set (`null` in a rule). */
export const SHOULD_NOT_BE_SET = 'should_not_be_set';

/** One step of a story or rule, as written. */
export type StoryStepItem =
  | {
      readonly kind: 'user';
      readonly intent: string | null;
      /** `faq/ask_name` when the intent was written with a response key. */
      readonly fullRetrievalIntent: string | null;
      readonly text: string | null;
      readonly entities: readonly JsonObject[];
      readonly line: number | undefined;
    }
  | { readonly kind: 'action'; readonly name: string; readonly line: number | undefined }
  | { readonly kind: 'bot'; readonly text: string; readonly line: number | undefined }
  | { readonly kind: 'slot'; readonly name: string; readonly value: unknown }
  | { readonly kind: 'active_loop'; readonly name: string | null }
  | {
      readonly kind: 'checkpoint';
      readonly name: string;
      /** `slot_was_set` conditions (start checkpoints only): slot values a joined story must have. */
      readonly conditions: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'or'; readonly alternatives: readonly StoryStepItem[][] };

/** A story or rule block of a YAML file. */
export interface StoryBlock {
  readonly name: string;
  readonly isRule: boolean;
  readonly file: string;
  readonly line: number | undefined;
  /** Rule conditions (slot / active_loop items); empty for stories. */
  readonly conditions: readonly StoryStepItem[];
  readonly steps: readonly StoryStepItem[];
  readonly conversationStart: boolean;
  readonly waitForUserInput: boolean;
}

export interface StoriesReadResult {
  readonly blocks: StoryBlock[];
  readonly warnings: string[];
}

/** Whether a YAML text holds `stories:` or `rules:` (cheap check before reading). */
export function hasStoriesOrRules(text: string): boolean {
  return /^(stories|rules)\s*:/m.test(text);
}

/**
 * Reads the `stories:` and `rules:` sections of a Rasa 3.x YAML training file (Rasa's
 * YAMLStoryReader): user steps (`intent`, `user`, `entities`), `action`, `bot`, `slot_was_set`,
 * `active_loop`, `checkpoint` and `or`; rules with `condition`, `conversation_start` and
 * `wait_for_user_input`. Problems throw `TRAINING_DATA.INVALID` naming file and line.
 */
export function readStoriesYaml(text: string, file: string): StoriesReadResult {
  const source = parseYamlSource(text, file);
  const warnings: string[] = [];
  const root = deref(source, source.doc.contents);
  const blocks: StoryBlock[] = [];
  if (root === null || root === undefined || (isScalar(root) && root.value === null)) {
    return { blocks, warnings };
  }
  if (!isMap(root)) yamlError(source, lineOf(source, root as Node), 'the file must be a mapping');
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : null;
    if (key !== 'stories' && key !== 'rules') continue;
    const list = deref(source, pair.value);
    if (list === null || (isScalar(list) && list.value === null)) continue;
    if (!isSeq(list)) {
      yamlError(source, lineOf(source, pair.key as Node), `'${key}' must be a list`);
    }
    for (const item of list.items) {
      blocks.push(readBlock(source, deref(source, item), key === 'rules', warnings));
    }
  }
  return { blocks, warnings };
}

function readBlock(
  source: YamlSource,
  node: unknown,
  isRule: boolean,
  warnings: string[],
): StoryBlock {
  const what = isRule ? 'rule' : 'story';
  if (!isMap(node)) {
    yamlError(source, lineOfAny(source, node), `each ${what} must be a mapping`);
  }
  const line = lineOf(source, node);
  const get = (k: string): unknown => deref(source, node.get(k, true));
  const nameNode = get(what);
  const raw: unknown = isScalar(nameNode) ? nameNode.value : null;
  const name = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
  if (!name.trim()) {
    yamlError(source, line, `a ${what} needs a non-empty '${what}' name`);
  }
  const stepsNode = get('steps');
  if (!isSeq(stepsNode)) {
    yamlError(source, line, `${what} '${name}' needs 'steps' (a list)`);
  }
  const steps = stepsNode.items.map((s) =>
    readStep(source, deref(source, s), `${what} '${name}'`, isRule, warnings),
  );
  const conditions: StoryStepItem[] = [];
  let conversationStart = false;
  let waitForUserInput = true;
  if (isRule) {
    const cond = get('condition');
    if (cond !== undefined && !(isScalar(cond) && cond.value === null)) {
      if (!isSeq(cond)) yamlError(source, line, `the condition of rule '${name}' must be a list`);
      for (const c of cond.items) {
        const step = readStep(source, deref(source, c), `rule '${name}'`, true, warnings);
        if (step.kind !== 'slot' && step.kind !== 'active_loop') {
          yamlError(
            source,
            lineOfAny(source, c),
            `rule '${name}': a condition may only hold 'active_loop' and 'slot_was_set'`,
          );
        }
        conditions.push(step);
      }
      conditions.push(...[]);
    }
    conversationStart = plainBool(source, get('conversation_start'), false, name);
    waitForUserInput = plainBool(source, get('wait_for_user_input'), true, name);
  }
  // Rasa: only start checkpoints filter on slots; others warn and ignore their conditions.
  let atStart = true;
  for (const step of steps) {
    if (step.kind !== 'checkpoint') {
      atStart = false;
      continue;
    }
    if (!atStart && Object.keys(step.conditions).length > 0) {
      warnings.push(
        `${source.file}:${line ?? '?'}: ${what} '${name}': end or intermediate checkpoints do not support conditions (checkpoint: ${step.name}); ignored`,
      );
    }
  }
  // `slot_was_set` in a step list expands to one item per slot.
  return {
    name,
    isRule,
    file: source.file,
    line,
    conditions: flattenSlots(conditions),
    steps: flattenSlots(steps),
    conversationStart,
    waitForUserInput,
  };
}

function flattenSlots(items: StoryStepItem[]): StoryStepItem[] {
  const out: StoryStepItem[] = [];
  for (const item of items) {
    if (item.kind === 'or') {
      out.push({ kind: 'or', alternatives: item.alternatives.map((a) => flattenSlots(a)) });
    } else out.push(item);
  }
  return out;
}

function plainBool(source: YamlSource, node: unknown, fallback: boolean, rule: string): boolean {
  if (node === undefined || node === null) return fallback;
  if (isScalar(node) && typeof node.value === 'boolean') return node.value;
  if (isScalar(node) && node.value === null) return fallback;
  yamlError(source, lineOfAny(source, node), `rule '${rule}': expected true or false`);
}

function lineOfAny(source: YamlSource, node: unknown): number | undefined {
  return isMap(node) || isSeq(node) || isScalar(node) ? lineOf(source, node) : undefined;
}

const STEP_KEYS = ['intent', 'user', 'or', 'action', 'bot', 'checkpoint', 'slot_was_set'];

function readStep(
  source: YamlSource,
  node: unknown,
  owner: string,
  isRule: boolean,
  warnings: string[],
): StoryStepItem {
  const line = lineOfAny(source, node);
  if (isScalar(node) && node.value === RULE_SNIPPET_ACTION_NAME) {
    return { kind: 'action', name: RULE_SNIPPET_ACTION_NAME, line };
  }
  if (!isMap(node)) yamlError(source, line, `${owner}: each step must be a mapping`);
  const data = toPlain(source, node) as JsonObject;
  if ('intent' in data || 'user' in data) return userStep(source, data, owner, line, warnings);
  if ('or' in data) {
    const alternatives = deref(source, node.get('or', true));
    if (!isSeq(alternatives) || alternatives.items.length === 0) {
      yamlError(source, line, `${owner}: 'or' must be a non-empty list`);
    }
    return {
      kind: 'or',
      alternatives: alternatives.items.map((a) => {
        const step = readStep(source, deref(source, a), owner, isRule, warnings);
        if (step.kind !== 'user' && step.kind !== 'slot') {
          yamlError(
            source,
            lineOfAny(source, a),
            `${owner}: 'or' alternatives must be user messages or slot_was_set`,
          );
        }
        return [step];
      }),
    };
  }
  if ('action' in data) {
    let name = data.action;
    if (typeof name !== 'string' || name.trim() === '') {
      yamlError(source, line, `${owner}: 'action' needs a non-empty action name`);
    }
    if (name === 'action_deactivate_form') {
      warnings.push(
        `${source.file}:${line ?? '?'}: 'action_deactivate_form' is deprecated; use 'action_deactivate_loop'`,
      );
      name = 'action_deactivate_loop';
    }
    return { kind: 'action', name: name as string, line };
  }
  if ('bot' in data) {
    if (typeof data.bot !== 'string') yamlError(source, line, `${owner}: 'bot' must be text`);
    return { kind: 'bot', text: data.bot, line };
  }
  if ('checkpoint' in data) {
    if (typeof data.checkpoint !== 'string' || !data.checkpoint) {
      yamlError(source, line, `${owner}: 'checkpoint' needs a name`);
    }
    const conditions: Record<string, unknown> = {};
    const slots = data.slot_was_set ?? [];
    if (!Array.isArray(slots)) {
      yamlError(source, line, `${owner}: the 'slot_was_set' of a checkpoint must be a list`);
    }
    for (const slot of slots) {
      if (!isJsonObject(slot)) {
        warnings.push(
          `${source.file}:${line ?? '?'}: slot '${JSON.stringify(slot)}' of checkpoint '${data.checkpoint}' has to be a dictionary ({slot: value}); ignored`,
        );
        continue;
      }
      Object.assign(conditions, slot);
    }
    return { kind: 'checkpoint', name: data.checkpoint, conditions };
  }
  if ('slot_was_set' in data) {
    const slots = data.slot_was_set;
    if (!Array.isArray(slots)) yamlError(source, line, `${owner}: 'slot_was_set' must be a list`);
    const items: StoryStepItem[] = [];
    for (const s of slots) {
      if (typeof s === 'string') {
        items.push({ kind: 'slot', name: s, value: 'filled' });
      } else if (isJsonObject(s) && Object.keys(s).length >= 1) {
        for (const [name, value] of Object.entries(s)) {
          items.push({
            kind: 'slot',
            name,
            value: value === null && isRule ? SHOULD_NOT_BE_SET : value,
          });
        }
      } else {
        yamlError(
          source,
          line,
          `${owner}: 'slot_was_set' items must be a slot name or {slot: value}`,
        );
      }
    }
    if (items.length === 1) return items[0] as StoryStepItem;
    return { kind: 'or', alternatives: [items] };
  }
  if ('active_loop' in data) {
    const name = data.active_loop;
    if (name !== null && typeof name !== 'string') {
      yamlError(source, line, `${owner}: 'active_loop' must be a form name or null`);
    }
    return { kind: 'active_loop', name: name === null && isRule ? SHOULD_NOT_BE_SET : name };
  }
  if ('metadata' in data && Object.keys(data).length === 1) {
    return { kind: 'or', alternatives: [[]] };
  }
  if ('stack' in data) {
    // Rasa Pro's stories of CALM conversations hold the dialogue stack's updates (JSON
    // patches); they change no prediction a story checks, so they are read and left out.
    if (!Array.isArray(data.stack)) {
      yamlError(source, line, `${owner}: 'stack' must be a list of JSON-patch operations`);
    }
    return { kind: 'or', alternatives: [[]] };
  }
  return yamlError(
    source,
    line,
    `${owner}: unknown step ${JSON.stringify(Object.keys(data))}; expected one of ${[...STEP_KEYS, 'active_loop'].join(', ')}`,
  );
}

function userStep(
  source: YamlSource,
  data: JsonObject,
  owner: string,
  line: number | undefined,
  warnings: string[],
): StoryStepItem {
  let intent: string | null = null;
  if (data.intent !== undefined && data.intent !== null) {
    if (typeof data.intent !== 'string' || data.intent.trim() === '') {
      yamlError(source, line, `${owner}: 'intent' must be a non-empty intent name`);
    }
    intent = data.intent.trim();
    if (intent.startsWith('/')) {
      warnings.push(
        `${source.file}:${line ?? '?'}: the intent '${intent}' should not start with '/'`,
      );
      intent = intent.slice(1);
    }
  }
  let text: string | null = null;
  let entities: JsonObject[] = [];
  if (data.user !== undefined && data.user !== null) {
    if (typeof data.user !== 'string') yamlError(source, line, `${owner}: 'user' must be text`);
    const raw = data.user.trim();
    try {
      const parsed = parseAnnotatedText(raw);
      text = parsed.text;
      entities = parsed.entities.map((e) => ({ ...e }));
    } catch (error) {
      yamlError(source, line, `${owner}: ${(error as Error).message}`);
    }
  }
  if (data.entities !== undefined && data.entities !== null) {
    if (!Array.isArray(data.entities)) {
      yamlError(source, line, `${owner}: 'entities' must be a list`);
    }
    entities = data.entities.map((e): JsonObject => {
      if (typeof e === 'string') return { entity: e, value: '' };
      if (isJsonObject(e)) {
        const out: JsonObject = {};
        for (const [k, v] of Object.entries(e)) {
          if (k === 'role' || k === 'group') out[k] = v;
          else {
            out.entity = k;
            out.value = v;
          }
        }
        return out;
      }
      return yamlError(source, line, `${owner}: each entity must be a name or {entity: value}`);
    });
  }
  if (intent === null && text === null) {
    yamlError(source, line, `${owner}: a user step needs 'intent' or 'user'`);
  }
  let fullRetrievalIntent: string | null = null;
  if (intent !== null && intent.includes('/')) {
    fullRetrievalIntent = intent;
    intent = intent.split('/')[0] ?? intent;
  }
  return { kind: 'user', intent, fullRetrievalIntent, text, entities, line };
}
