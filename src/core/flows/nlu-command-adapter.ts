import {
  formIgnoredIntents,
  fromEntityValues,
  requiredSlots,
} from 'src/core/actions/slot-extraction';
import { stableStringify } from 'src/core/dialogue/dialogue-state';
import { type Domain } from 'src/core/domain/domain';
import { REQUESTED_SLOT } from 'src/core/domain/domain-constants';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { cleanUpCommands, commandsFromParseData } from './command-processor';
import { type Command, USER_INPUT_EMPTY, USER_INPUT_TOO_LONG } from './commands';
import { type Flow, isPatternFlow } from './flow';
import { type FlowsList } from './flows-list';
import { evaluatePredicate } from './predicate';
import { activeFlowOf, stackOf } from './stack-events';

/** Default of `user_input.max_characters` (a negative limit disables the check). */
export const DEFAULT_MAX_CHARACTERS = 420;

/** The command a pattern's `nlu_trigger` issues (patterns not listed issue none). */
export const PATTERN_TRIGGER_COMMANDS: Readonly<Record<string, Command>> = {
  pattern_session_start: { command: 'session start' },
  pattern_cancel_flow: { command: 'cancel flow' },
  pattern_chitchat: { command: 'chitchat' },
  pattern_human_handoff: { command: 'human handoff' },
  pattern_search: { command: 'knowledge' },
  pattern_skip_question: { command: 'skip question' },
  pattern_cannot_handle: { command: 'cannot handle', reason: 'cannot_handle_default' },
  pattern_restart: { command: 'restart' },
};

const SET_SLOTS_PREFIX = '/SetSlots(';
const SET_SLOTS_PAIR = /([^(),=]+)=([^(),]+)/g;
const MAX_PAYLOAD_SLOTS = 10;

export interface NluCommandsInput {
  /** The NLU result of the new message (`text`, `intent`, `entities`, maybe `commands`). */
  readonly parseData: JsonObject;
  /** The conversation before the new message. */
  readonly tracker: DialogueStateTracker;
  readonly flows: FlowsList;
  readonly domain: Domain;
  /** `user_input.max_characters` (default 420; negative: no limit). */
  readonly maxCharacters?: number;
}

/**
 * The commands of a `/SetSlots(slot=value, …)` button payload (extractor
 * `CommandPayloadReader`; `none` / `null` / `undefined` values → null); null when the text is
 * not such a payload. A payload naming a slot the domain lacks, or with more than ten `=`,
 * yields no commands.
 */
export function setSlotsPayloadCommands(text: string, domain: Domain): Command[] | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith(SET_SLOTS_PREFIX)) return null;
  if ((trimmed.match(/=/g) ?? []).length > MAX_PAYLOAD_SLOTS) return [];
  const commands: Command[] = [];
  for (const match of trimmed.matchAll(SET_SLOTS_PAIR)) {
    const name = (match[1] ?? '').trim();
    const raw = (match[2] ?? '').trim();
    if (domain.slot(name) === undefined) return [];
    const value = ['none', 'null', 'undefined'].includes(raw.toLowerCase()) ? null : raw;
    commands.push({ command: 'set slot', name, value, extractor: 'CommandPayloadReader' });
  }
  return commands;
}

/**
 * The flows that may start now: no guard, or a guard that holds for `{context, slots}`, plus
 * the flows on the stack (and the active flow).
 */
export function availableFlows(tracker: DialogueStateTracker, flows: FlowsList): Flow[] {
  const stack = stackOf(tracker);
  const active = new Set(stack.userFlowIds());
  const activeFlow = activeFlowOf(stack);
  if (activeFlow !== null) active.add(activeFlow);
  let document: Record<string, unknown> | null = null; // built for the first guard only
  return flows.flows.filter((f) => {
    if (f.guard === null || active.has(f.id)) return true;
    document ??= { context: stack.context(), slots: tracker.slotValuesObject() };
    return evaluatePredicate(f.guard, document);
  });
}

/** The slots the flows of a FlowsList collect, computed once per FlowsList (it never changes). */
const COLLECTED_SLOTS = new WeakMap<FlowsList, ReadonlySet<string>>();

/** The slots some flow of `available` (a part of `flows.flows`, in order) collects. */
function collectedSlots(available: readonly Flow[], flows: FlowsList): ReadonlySet<string> {
  const all = available.length === flows.flows.length;
  let known = all ? COLLECTED_SLOTS.get(flows) : undefined;
  if (known === undefined) {
    known = new Set(available.flatMap((f) => flows.collectSteps(f.id).map((s) => s.collect)));
    if (all) COLLECTED_SLOTS.set(flows, known);
  }
  return known;
}

function intentOf(parseData: JsonObject): { name: string | null; confidence: number } {
  const intent = isJsonObject(parseData.intent) ? parseData.intent : {};
  const name = typeof intent.name === 'string' && intent.name !== '' ? intent.name : null;
  // An intent without a score (e.g. a `/intent` payload) counts as certain.
  const confidence = typeof intent.confidence === 'number' ? intent.confidence : 1;
  return { name, confidence };
}

function entitiesOf(parseData: JsonObject): JsonObject[] {
  return Array.isArray(parseData.entities) ? parseData.entities.filter(isJsonObject) : [];
}

/**
 * Rasa Pro's `NLUCommandAdapter` inside the common generator wrapper: a message that already
 * carries commands keeps them; a `/SetSlots(…)` payload becomes its `set slot` commands; an
 * empty or too long text becomes an `error` command; otherwise the first available flow whose
 * `nlu_trigger` matches the intent (at or above its confidence threshold) is started (a
 * pattern issues its command instead), and every slot some available flow collects that the
 * message fills through its predefined mappings gets a `set slot` (extractor `NLU`). The result
 * goes through the command processor's clean-up.
 */
export function nluCommands(input: NluCommandsInput): Command[] {
  const { parseData, tracker, flows, domain } = input;
  const existing = commandsFromParseData(parseData);
  if (existing.length > 0) return existing;
  const text = typeof parseData.text === 'string' ? parseData.text : '';
  const payload = setSlotsPayloadCommands(text, domain);
  if (payload !== null) return payload;
  if (text.trim() === '') return [{ command: 'error', error_type: USER_INPUT_EMPTY, info: {} }];
  const max = input.maxCharacters ?? DEFAULT_MAX_CHARACTERS;
  if (max >= 0 && [...text].length > max) {
    return [{ command: 'error', error_type: USER_INPUT_TOO_LONG, info: { max_characters: max } }];
  }
  if (flows.isEmpty) return [];
  const intent = intentOf(parseData);
  if (intent.name === null && entitiesOf(parseData).length === 0) return [];
  const available = availableFlows(tracker, flows);
  const triggered: Command[] = [];
  for (const flow of available) {
    const fires = flow.nluTrigger.some(
      (t) => t.intent === intent.name && intent.confidence >= t.confidenceThreshold,
    );
    if (!fires) continue;
    if (isPatternFlow(flow.id)) {
      const command = PATTERN_TRIGGER_COMMANDS[flow.id];
      if (command !== undefined) triggered.push(command);
    } else {
      triggered.push({ command: 'start flow', flow: flow.id });
    }
  }
  const commands: Command[] = triggered.slice(0, 1);
  const collected = collectedSlots(available, flows);
  for (const slot of tracker.slots) {
    if (!collected.has(slot.name)) continue;
    const extracted = extractSlotValue(slot, input);
    if (extracted !== undefined) {
      commands.push({ command: 'set slot', name: slot.name, value: extracted, extractor: 'NLU' });
    }
  }
  return commands.length > 0 ? cleanUpCommands(commands, { tracker, flows, domain }) : commands;
}

// ---------------------------------------------------------------------------------------------
// Slot mappings (Rasa's SlotFillingManager with the new message)

function asList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** The value the slot's first applicable predefined mapping extracts; undefined when none. */
function extractSlotValue(slot: SlotDefinition, input: NluCommandsInput): unknown {
  const { tracker } = input;
  for (const mapping of slot.mappings) {
    const type = typeof mapping.type === 'string' ? mapping.type : 'from_llm';
    if (type === 'from_llm' || type === 'custom') continue;
    if (!mappingIsValid(type, mapping, input.domain)) continue;
    if (!intentIsDesired(mapping, input)) continue;
    if (type !== 'from_trigger_intent' && !conditionsHold(mapping, slot.name, input)) continue;
    if (failsUniqueEntityCheck(slot.name, type, mapping, input)) continue;
    const values = mappingValues(type, mapping, input);
    if (values.length === 0) continue;
    const value = slot.type === 'list' ? values : values[values.length - 1];
    if ((value !== null && value !== undefined) || (tracker.getSlot(slot.name) ?? null) !== null) {
      return value ?? null;
    }
  }
  return undefined;
}

function mappingIsValid(type: string, mapping: JsonObject, domain: Domain): boolean {
  if (type === 'from_entity') return domain.entities.includes(String(mapping.entity));
  if (type === 'from_intent' && mapping.intent !== undefined && mapping.intent !== null) {
    return asList(mapping.intent).every((i) => i === '' || domain.intents.includes(i));
  }
  return true;
}

function intentIsDesired(mapping: JsonObject, input: NluCommandsInput): boolean {
  const intent = intentOf(input.parseData).name;
  const wanted = asList(mapping.intent);
  if (wanted.length > 0) return intent !== null && wanted.includes(intent);
  const blocked = [
    ...asList(mapping.not_intent),
    ...formIgnoredIntents(input.domain, input.tracker.activeLoopName),
  ];
  return intent === null || !blocked.includes(intent);
}

function conditionsHold(mapping: JsonObject, slotName: string, input: NluCommandsInput): boolean {
  const conditions = Array.isArray(mapping.conditions)
    ? mapping.conditions.filter(isJsonObject)
    : [];
  if (conditions.length === 0) return true;
  const { tracker } = input;
  const activeFlow = activeFlowOf(stackOf(tracker));
  if (activeFlow !== null) {
    return conditions.some((c) => c.active_flow !== undefined && c.active_flow === activeFlow);
  }
  const loop = tracker.activeLoopName;
  const requested = tracker.getSlot(REQUESTED_SLOT);
  if ((tracker.activeLoop?.rejected ?? false) && requested === slotName) return false;
  return conditions.some((c) => {
    const conditionLoop = 'active_loop' in c ? c.active_loop : '';
    if (conditionLoop && conditionLoop === loop) {
      return !c.requested_slot || c.requested_slot === requested;
    }
    return conditionLoop === null && loop === null;
  });
}

/** Inside a form, an entity several of its slots map the same way fills only the asked slot. */
function failsUniqueEntityCheck(
  slotName: string,
  type: string,
  mapping: JsonObject,
  input: NluCommandsInput,
): boolean {
  const { tracker, domain } = input;
  const form = tracker.activeLoopName;
  if (type !== 'from_entity' || form === null) return false;
  if (tracker.getSlot(REQUESTED_SLOT) === slotName) return false;
  const required = requiredSlots(domain, form);
  if (!required.includes(slotName)) return false;
  const key = stableStringify(mapping);
  let count = 0;
  for (const name of required) {
    for (const m of domain.slot(name)?.mappings ?? []) {
      if (m.type === 'from_entity' && stableStringify(m) === key) count++;
    }
  }
  return count > 1;
}

function mappingValues(type: string, mapping: JsonObject, input: NluCommandsInput): unknown[] {
  const { parseData, tracker } = input;
  switch (type) {
    case 'from_entity':
      return fromEntityValues(entitiesOf(parseData), mapping);
    case 'from_intent':
      return [mapping.value ?? null];
    case 'from_trigger_intent': {
      const loop = tracker.activeLoopName;
      if (loop === null) return [];
      const loops = Array.isArray(mapping.conditions)
        ? mapping.conditions.filter(isJsonObject).map((c) => c.active_loop)
        : [];
      if (loops.length > 0 && !loops.includes(loop)) return [];
      return [mapping.value ?? null];
    }
    case 'from_text': {
      const text =
        typeof parseData.text === 'string' && parseData.text !== '' ? parseData.text : null;
      return [text ?? tracker.latestMessage.text];
    }
    default:
      return [];
  }
}
