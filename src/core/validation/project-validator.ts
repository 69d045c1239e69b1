import { type DialogueState } from 'src/core/dialogue/dialogue-state';
import { trainingTrackers } from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import {
  ACTION_LISTEN_NAME,
  DEFAULT_ACTION_NAMES,
  DEFAULT_INTENTS,
  REQUESTED_SLOT,
} from 'src/core/domain/domain-constants';
import { isJsonObject } from 'src/core/events/json-values';
import { type FlowsList } from 'src/core/flows/flows-list';
import { examplesOf, lastStates } from 'src/core/policies/training-examples';
import { baseIntent, type NluTrainingData } from 'src/core/training-data/nlu-training-data';
import {
  RULE_SNIPPET_ACTION_NAME,
  SHOULD_NOT_BE_SET,
  type StoryBlock,
  type StoryStepItem,
} from 'src/core/training-data/stories-yaml-reader';

/**
 * One finding of `parley data validate`. Errors make the check fail; warnings only with
 * `--fail-on-warnings` (Rasa's `Validator` results, where a `False` outcome is an error here).
 */
export interface ValidationIssue {
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

/** What a project consists of, read from its files. */
export interface ProjectData {
  readonly domain: Domain;
  /** NLU data of every data file, merged; null without NLU data. */
  readonly nlu: NluTrainingData | null;
  readonly blocks: readonly StoryBlock[];
  /**
   * The flows (default patterns merged in), when the data has valid ones: their trigger
   * intents and the actions and responses they run count as used.
   */
  readonly flows?: FlowsList | null;
}

/** An action a story or rule names that the domain does not know. */
export interface UnknownAction {
  readonly name: string;
  readonly block: string;
  readonly isRule: boolean;
  readonly file: string;
  readonly line: number | undefined;
}

/** Every `user` / `action` / `active_loop` / `slot` step of a block, `or` branches included. */
function* stepsOf(items: readonly StoryStepItem[]): Generator<StoryStepItem> {
  for (const item of items) {
    if (item.kind === 'or') for (const alt of item.alternatives) yield* stepsOf(alt);
    else yield item;
  }
}

function allSteps(block: StoryBlock): Generator<StoryStepItem> {
  return stepsOf([...block.conditions, ...block.steps]);
}

function where(block: StoryBlock, line?: number): string {
  const at = line ?? block.line;
  return `${block.isRule ? 'rule' : 'story'} '${block.name}' (${block.file}${at === undefined ? '' : `:${at}`})`;
}

/** Whether `name` is an action of the domain (retrieval actions `utter_faq` included). */
function isKnownAction(domain: Domain, name: string): boolean {
  if (name === RULE_SNIPPET_ACTION_NAME) return true;
  if (domain.actionNamesOrTexts.includes(name)) return true;
  return Object.keys(domain.responses).some((r) => r.startsWith(`${name}/`));
}

/**
 * The actions stories and rules run that the domain does not list (Rasa's
 * `Domain.index_for_action` raises `ActionNotFoundException` for them when the policies are
 * trained, so `rasa train` refuses such data).
 */
export function unknownActions(blocks: readonly StoryBlock[], domain: Domain): UnknownAction[] {
  const out: UnknownAction[] = [];
  for (const block of blocks) {
    for (const step of allSteps(block)) {
      if (step.kind !== 'action' || isKnownAction(domain, step.name)) continue;
      out.push({
        name: step.name,
        block: block.name,
        isRule: block.isRule,
        file: block.file,
        line: step.line ?? block.line,
      });
    }
  }
  return out;
}

/** The message `rasa train` stops with, naming every unknown action and where it is used. */
export function unknownActionsMessage(unknown: readonly UnknownAction[]): string {
  const lines = unknown.map(
    (u) =>
      `  - '${u.name}' in ${u.isRule ? 'rule' : 'story'} '${u.block}' (${u.file}${u.line === undefined ? '' : `:${u.line}`})`,
  );
  return (
    `Cannot access action${unknown.length > 1 ? 's' : ''} that ${unknown.length > 1 ? 'are' : 'is'} ` +
    `not a registered action for this domain:\n${lines.join('\n')}\n` +
    "Add each to the domain's 'actions' (custom actions), 'responses' (utter_ actions) or 'forms'."
  );
}

/**
 * Rasa's `Validator` (`rasa data validate`): intents, entities, slots, actions, forms and
 * responses used versus declared, utterance actions without a response, the same example under
 * two intents, and (with `maxHistory`) conflicts between stories.
 */
export function validateProject(
  project: ProjectData,
  options: { readonly maxHistory?: number | null; readonly storiesOnly?: boolean } = {},
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const error = (message: string): void => void issues.push({ severity: 'error', message });
  const warning = (message: string): void => void issues.push({ severity: 'warning', message });
  const domain = project.nlu ? project.domain.withResponses(project.nlu.responses) : project.domain;

  if (!options.storiesOnly) {
    if (domain.isEmpty()) {
      error('The domain is empty: it declares no intents, responses or actions.');
    }
    verifyIntents(domain, project, error, warning);
    verifyExampleRepetition(project.nlu, warning);
    verifyEntities(domain, project, error, warning);
    verifyActions(domain, project.blocks, project.flows ?? null, error, warning);
    verifyForms(domain, project.blocks, error);
    verifySlots(domain, project.blocks, error);
  }
  for (const message of storyConflicts(project.blocks, domain, options.maxHistory ?? null)) {
    error(message);
  }
  return issues;
}

type Report = (message: string) => void;

function verifyIntents(domain: Domain, project: ProjectData, error: Report, warning: Report): void {
  const declared = new Set(domain.intents);
  const nluIntents = new Set((project.nlu?.examples ?? []).map((e) => baseIntent(e.intent)));
  for (const intent of [...nluIntents].sort()) {
    if (!declared.has(intent)) {
      error(
        `There is a message in the training data labeled with intent '${intent}'. ` +
          'This intent is not listed in your domain. Add it to the domain file.',
      );
    }
  }
  const storyIntents = new Set<string>(
    (project.flows?.flows ?? []).flatMap((f) => f.nluTrigger.map((t) => t.intent)),
  );
  for (const block of project.blocks) {
    for (const step of allSteps(block)) {
      if (step.kind !== 'user' || step.intent === null) continue;
      const intent = baseIntent(step.intent);
      storyIntents.add(intent);
      if (!declared.has(intent)) {
        error(
          `The intent '${intent}' is used in ${where(block, step.line)} but it is not listed in the domain file.`,
        );
      }
    }
  }
  for (const intent of domain.intents) {
    if (DEFAULT_INTENTS.includes(intent)) continue;
    if (project.nlu && !nluIntents.has(intent)) {
      warning(
        `The intent '${intent}' is listed in the domain file, but is not found in the NLU training data.`,
      );
    }
    if (project.blocks.length > 0 && !storyIntents.has(intent)) {
      warning(`The intent '${intent}' is not used in any story or rule.`);
    }
  }
}

function verifyExampleRepetition(nlu: NluTrainingData | null, warning: Report): void {
  const byText = new Map<string, Set<string>>();
  for (const e of nlu?.examples ?? []) {
    const key = e.text.trim();
    const set = byText.get(key) ?? new Set<string>();
    set.add(e.intent);
    byText.set(key, set);
  }
  for (const [text, intents] of byText) {
    if (intents.size < 2) continue;
    warning(
      `The example '${text}' was found labeled with multiple different intents in the training ` +
        `data: ${[...intents].sort().join(', ')}. Each example should appear under one intent only.`,
    );
  }
}

function verifyEntities(
  domain: Domain,
  project: ProjectData,
  error: Report,
  warning: Report,
): void {
  const declared = new Set(domain.entities);
  const used = new Set<string>();
  // Rasa trains such data (the extractor learns the entity; the dialogue never sees it).
  const undeclared = new Map<string, number>();
  for (const e of project.nlu?.examples ?? []) {
    for (const a of e.entities) {
      used.add(a.entity);
      if (!declared.has(a.entity)) undeclared.set(a.entity, (undeclared.get(a.entity) ?? 0) + 1);
    }
  }
  for (const [entity, count] of undeclared) {
    warning(
      `The entity '${entity}' is annotated in ${count} NLU example${count === 1 ? '' : 's'} ` +
        'but it is not listed in the domain file: the dialogue never sees it.',
    );
  }
  for (const block of project.blocks) {
    for (const step of allSteps(block)) {
      if (step.kind !== 'user') continue;
      for (const entity of step.entities) {
        const name = typeof entity.entity === 'string' ? entity.entity : Object.keys(entity)[0];
        if (name === undefined) continue;
        used.add(name);
        if (!declared.has(name)) {
          error(
            `The entity '${name}' is used in ${where(block, step.line)} but it is not listed in the domain file.`,
          );
        }
      }
    }
  }
  for (const slot of domain.userSlots) {
    for (const mapping of slot.mappings) {
      if (mapping.type === 'from_entity' && typeof mapping.entity === 'string') {
        used.add(mapping.entity);
        if (!declared.has(mapping.entity)) {
          error(
            `The slot '${slot.name}' has a from_entity mapping for the entity '${mapping.entity}', ` +
              'which is not listed in the domain file.',
          );
        }
      }
    }
  }
  if (project.nlu) {
    for (const entity of domain.entities) {
      if (!used.has(entity)) {
        warning(
          `The entity '${entity}' is listed in the domain file but is not used in any example, story or slot mapping.`,
        );
      }
    }
  }
}

/** The actions and responses the flows' steps run (collect questions and rejections too). */
function flowActions(flows: FlowsList | null): string[] {
  const out: string[] = [];
  for (const flow of flows?.flows ?? []) {
    for (const step of flows?.allSteps(flow.id) ?? []) {
      if (step.kind === 'action') out.push(step.action);
      if (step.kind === 'collect') {
        out.push(step.utter, step.collectAction, ...step.rejections.map((r) => r.utter));
      }
    }
  }
  return out;
}

function verifyActions(
  domain: Domain,
  blocks: readonly StoryBlock[],
  flows: FlowsList | null,
  error: Report,
  warning: Report,
): void {
  const responses = new Set(Object.keys(domain.responses).map((r) => r.split('/')[0] as string));
  for (const action of domain.customActions) {
    if (action.startsWith('utter_') && !responses.has(action)) {
      error(
        `The action '${action}' is listed in the domain's actions, but there is no response with that name.`,
      );
    }
  }
  const usedActions = new Set<string>(flowActions(flows));
  for (const block of blocks) {
    for (const step of allSteps(block)) {
      if (step.kind === 'active_loop' && step.name !== null) usedActions.add(step.name);
      if (step.kind !== 'action') continue;
      usedActions.add(step.name);
      if (step.name.startsWith('utter_') && !responses.has(step.name)) {
        if (!DEFAULT_ACTION_NAMES.includes(step.name)) {
          error(
            `The action '${step.name}' is used in ${where(block, step.line)}, but it is not a valid ` +
              'utterance action: add a response with that name to the domain.',
          );
        }
      } else if (!isKnownAction(domain, step.name)) {
        error(
          `The action '${step.name}' is used in ${where(block, step.line)}, but it is not listed in the domain file.`,
        );
      }
    }
  }
  if (blocks.length === 0) return;
  for (const response of [...responses].sort()) {
    if (!response.startsWith('utter_') || usedActions.has(response)) continue;
    if (response.startsWith('utter_ask_')) continue; // asked by forms
    warning(`The utterance '${response}' is not used in any story or rule.`);
  }
  for (const action of domain.customActions) {
    if (action.startsWith('utter_') || usedActions.has(action)) continue;
    if (action.startsWith('validate_') || action === 'action_validate_slot_mappings') continue;
    warning(`The action '${action}' is not used in any story or rule.`);
  }
}

function verifyForms(domain: Domain, blocks: readonly StoryBlock[], error: Report): void {
  for (const block of blocks) {
    for (const step of allSteps(block)) {
      if (step.kind !== 'active_loop' || step.name === null || step.name === SHOULD_NOT_BE_SET) {
        continue;
      }
      if (!domain.formNames.includes(step.name) && !isKnownAction(domain, step.name)) {
        error(
          `The form '${step.name}' is used in ${where(block)}, but it is not listed in the domain file.`,
        );
      }
    }
  }
  for (const [form, definition] of Object.entries(domain.forms)) {
    const required = isJsonObject(definition) ? definition.required_slots : undefined;
    if (!Array.isArray(required)) continue;
    for (const slot of required) {
      if (typeof slot === 'string' && domain.slot(slot) === undefined) {
        error(
          `The form '${form}' requires the slot '${slot}', which is not listed in the domain's slots.`,
        );
      }
    }
  }
}

function verifySlots(domain: Domain, blocks: readonly StoryBlock[], error: Report): void {
  for (const block of blocks) {
    for (const step of allSteps(block)) {
      if (step.kind !== 'slot' || step.name === REQUESTED_SLOT) continue;
      if (domain.slot(step.name) === undefined) {
        error(
          `The slot '${step.name}' is set in ${where(block)}, but it is not listed in the domain file.`,
        );
      }
    }
  }
}

function describeLast(states: readonly DialogueState[]): string {
  const last = states[states.length - 1];
  if (last === undefined) return 'the start of the conversation';
  const action = last.prev_action?.action_name ?? last.prev_action?.action_text;
  if (action === ACTION_LISTEN_NAME || action === undefined) {
    const intent = last.user?.intent ?? last.user?.text;
    return intent === undefined ? 'the start of the conversation' : `user utterance '${intent}'`;
  }
  return `action '${action}'`;
}

/**
 * Rasa's `find_story_conflicts`: stories (not rules) whose last `maxHistory` states (the longest
 * story when null) are the same but which go on with different actions.
 */
export function storyConflicts(
  blocks: readonly StoryBlock[],
  domain: Domain,
  maxHistory: number | null,
): string[] {
  const stories = blocks.filter((b) => !b.isRule);
  if (stories.length === 0) return [];
  const trackers = trainingTrackers(stories, domain);
  const examples = trackers.map((t) => ({ name: t.name, examples: examplesOf(t, domain) }));
  const window = maxHistory ?? Math.max(1, ...examples.map((e) => e.examples.length + 1));
  const seen = new Map<string, { states: DialogueState[]; byAction: Map<string, Set<string>> }>();
  for (const { name, examples: list } of examples) {
    for (const { states, label } of list) {
      const sliced = lastStates(states, window);
      const key = JSON.stringify(sliced);
      const entry = seen.get(key) ?? { states: sliced, byAction: new Map<string, Set<string>>() };
      const names = entry.byAction.get(label) ?? new Set<string>();
      names.add(name);
      entry.byAction.set(label, names);
      seen.set(key, entry);
    }
  }
  const out: string[] = [];
  for (const { states, byAction } of seen.values()) {
    if (byAction.size < 2) continue;
    const lines = [...byAction.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([action, names]) =>
          `  ${action} predicted in ${[...names]
            .sort()
            .map((n) => `'${n}'`)
            .join(', ')}`,
      );
    out.push(`Story structure conflict after ${describeLast(states)}:\n${lines.join('\n')}`);
  }
  return out;
}
