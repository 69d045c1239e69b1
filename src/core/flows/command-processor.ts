import { createHash } from 'node:crypto';
import { stableStringify } from 'src/core/dialogue/dialogue-state';
import { type Domain } from 'src/core/domain/domain';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { flowCancelled } from 'src/core/events/flow-cancelled';
import { flowInterrupted } from 'src/core/events/flow-interrupted';
import { isJsonObject, jsonEqual } from 'src/core/events/json-values';
import { sessionEnded } from 'src/core/events/session-ended';
import { slotSet } from 'src/core/events/slot-set';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import {
  CANNOT_HANDLE_CHITCHAT,
  CANNOT_HANDLE_DEFAULT,
  type Command,
  INTERNAL_ERROR_DEFAULT,
  type SetSlotExtractor,
} from './commands';
import { type CollectStep, CONTINUE_STEP_PREFIX, END_STEP, type Flow, START_STEP } from './flow';
import { type FlowsList } from './flows-list';
import { DialogueStack, newFrameId as randomFrameId } from './stack';
import { applyStackEvent, stackEvent, stackStatesOf, trackerStackFrames } from './stack-events';

/*
 * Rasa Pro's command processor: the commands of the latest user message are cleaned up,
 * checked against a change of the flows' code, and executed (in reverse order) against a working
 * copy of the conversation; the resulting events are logged right after the user event.
 */

/** The built-in slot holding each flow's fingerprint (never written into stories). */
export const FLOW_HASHES_SLOT = 'flow_hashes';
/** The coexistence routing slot (a `set slot` of it is never a correction). */
export const ROUTE_TO_CALM_SLOT = 'route_session_to_calm';
/** `cannot handle` reason of a `set slot` whose extractor does not fit the slot's mappings. */
export const CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR =
  'A command generator attempted to set a slot with a value extracted by an extractor ' +
  'that is incompatible with the slot mapping type.';

const ACTION_TRIGGER_CHITCHAT = 'action_trigger_chitchat';
const PATTERN_CHITCHAT = 'pattern_chitchat';
const PATTERN_CORRECTION = 'pattern_correction';
const PATTERN_COLLECT = 'pattern_collect_information';
const NEXT_END = `${CONTINUE_STEP_PREFIX}${END_STEP}`;
/** Mapping types the NLU extractor may fill. */
const PREDEFINED_MAPPINGS = new Set([
  'from_entity',
  'from_intent',
  'from_trigger_intent',
  'from_text',
]);
const EXTRACTORS: readonly SetSlotExtractor[] = ['LLM', 'NLU', 'CommandPayloadReader'];
const FIELDLESS = new Set<Command['command']>([
  'cancel flow',
  'chitchat',
  'knowledge',
  'human handoff',
  'skip question',
  'repeat',
  'restart',
  'session start',
  'session end',
  'handle code change',
  'noop',
]);

// ---------------------------------------------------------------------------------------------
// Reading commands

/** One `parse_data.commands` entry as a command; null when unknown or malformed. */
export function commandFromJson(entry: unknown): Command | null {
  if (!isJsonObject(entry) || typeof entry.command !== 'string') return null;
  const name = entry.command;
  if (FIELDLESS.has(name as Command['command'])) return { command: name } as Command;
  switch (name) {
    case 'start flow':
      return typeof entry.flow === 'string' ? { command: name, flow: entry.flow } : null;
    case 'set slot': {
      const extractor = entry.extractor ?? 'LLM';
      if (typeof entry.name !== 'string' || !('value' in entry)) return null;
      if (!EXTRACTORS.includes(extractor as SetSlotExtractor)) return null;
      return {
        command: name,
        name: entry.name,
        value: entry.value ?? null,
        extractor: extractor as SetSlotExtractor,
      };
    }
    case 'clarify':
      return Array.isArray(entry.options) && entry.options.every((o) => typeof o === 'string')
        ? { command: name, options: entry.options }
        : null;
    case 'correct slot': {
      const slots = entry.corrected_slots;
      if (!Array.isArray(slots)) return null;
      const corrected: { name: string; value: unknown; filled_by?: string | null }[] = [];
      for (const s of slots) {
        if (!isJsonObject(s) || typeof s.name !== 'string' || !('value' in s)) return null;
        const filledBy = typeof s.filled_by === 'string' ? s.filled_by : null;
        corrected.push({ name: s.name, value: s.value ?? null, filled_by: filledBy });
      }
      return { command: name, corrected_slots: corrected };
    }
    case 'cannot handle': {
      const reason = 'reason' in entry ? entry.reason : CANNOT_HANDLE_DEFAULT;
      if (reason !== null && typeof reason !== 'string') return null;
      return { command: name, reason };
    }
    case 'error': {
      const type = entry.error_type ?? INTERNAL_ERROR_DEFAULT;
      const info = entry.info ?? {};
      if (typeof type !== 'string' || !isJsonObject(info)) return null;
      return { command: name, error_type: type, info };
    }
    default:
      return null;
  }
}

/** The commands of a parse result (`parse_data.commands`); unknown or malformed entries dropped. */
export function commandsFromParseData(parseData: unknown): Command[] {
  if (!isJsonObject(parseData) || !Array.isArray(parseData.commands)) return [];
  return parseData.commands.flatMap((entry) => {
    const command = commandFromJson(entry);
    return command === null ? [] : [command];
  });
}

// ---------------------------------------------------------------------------------------------
// Flow fingerprints (code change)

/** A deterministic fingerprint of a flow: sha256 of its canonical JSON, 32 hex characters. */
export function flowFingerprint(flow: Flow): string {
  let known = FLOW_FINGERPRINT.get(flow);
  if (known === undefined) {
    known = createHash('sha256').update(stableStringify(flow)).digest('hex').slice(0, 32);
    FLOW_FINGERPRINT.set(flow, known);
  }
  return known;
}

/** Fingerprints already computed (a Flow never changes). */
const FLOW_FINGERPRINT = new WeakMap<Flow, string>();

/** Fingerprints of a FlowsList, computed once (a FlowsList never changes). */
const FINGERPRINTS = new WeakMap<FlowsList, Readonly<Record<string, string>>>();

/** Fingerprints of every flow (user flows and patterns), by id (a copy). */
export function flowFingerprints(flows: FlowsList): Record<string, string> {
  return { ...sharedFingerprints(flows) };
}

/** Fingerprints of every flow, by id (shared: do not change it). */
function sharedFingerprints(flows: FlowsList): Readonly<Record<string, string>> {
  let known = FINGERPRINTS.get(flows);
  if (known === undefined) {
    const out: Record<string, string> = {};
    for (const flow of flows.flows) out[flow.id] = flowFingerprint(flow);
    known = out;
    FINGERPRINTS.set(flows, known);
  }
  return known;
}

/**
 * Stored `flow_hashes` values found to hold exactly a FlowsList's fingerprints. The slot's
 * value is the same object from turn to turn (values are never changed in place), so a
 * conversation compares its ~20 fingerprints once, not on every turn.
 */
const SAME_FINGERPRINTS = new WeakMap<object, Readonly<Record<string, string>>>();

/** The `flow_hashes` slot's value: the slot, or (when the domain lacks it) the latest event. */
function storedFingerprints(tracker: DialogueStateTracker): Record<string, unknown> {
  const slot = tracker.getSlot(FLOW_HASHES_SLOT);
  if (slot !== undefined) return isJsonObject(slot) ? slot : {};
  const events = tracker.appliedEvents();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type === 'session_ended') break;
    if (e.type === 'slot' && e.name === FLOW_HASHES_SLOT) {
      return isJsonObject(e.value) ? e.value : {};
    }
  }
  return {};
}

/** Whether the stored `flow_hashes` value holds exactly these fingerprints. */
function sameFingerprints(
  fingerprints: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, unknown>>,
): boolean {
  if (SAME_FINGERPRINTS.get(stored) === fingerprints) return true;
  const ids = Object.keys(fingerprints);
  if (Object.keys(stored).length !== ids.length) return false;
  const same = ids.every((id) => stored[id] === fingerprints[id]);
  if (same) SAME_FINGERPRINTS.set(stored, fingerprints);
  return same;
}

/** Ids of the flows on the stack that no longer exist or whose fingerprint changed. */
export function changedFlowsOnStack(
  frames: readonly JsonObject[],
  flows: FlowsList,
  stored: Record<string, unknown>,
): string[] {
  const changed: string[] = [];
  for (const frame of frames) {
    if (typeof frame.flow_id !== 'string') continue;
    const flow = flows.flow(frame.flow_id);
    if (flow === undefined || (flow.id in stored && stored[flow.id] !== flowFingerprint(flow))) {
      if (!changed.includes(frame.flow_id)) changed.push(frame.flow_id);
    }
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Stack helpers (Rasa's stack utils)

function isFlowFrame(frame: JsonObject): boolean {
  return typeof frame.flow_id === 'string';
}

/** Top flow frame skipping collect frames and `call` user frames (Rasa `top_flow_frame`). */
function topFlowFrame(frames: readonly JsonObject[]): JsonObject | undefined {
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i] as JsonObject;
    if (f.type === PATTERN_COLLECT) continue;
    if (f.type === 'flow' && f.frame_type === 'call') continue;
    if (isFlowFrame(f)) return f;
  }
  return undefined;
}

function topUserFrame(
  frames: readonly JsonObject[],
  includeCallAndLink = false,
): JsonObject | undefined {
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i] as JsonObject;
    if (f.type !== 'flow') continue;
    if (!includeCallAndLink && (f.frame_type === 'call' || f.frame_type === 'link')) continue;
    return f;
  }
  return undefined;
}

function userFlowIdsOn(frames: readonly JsonObject[]): Set<string> {
  return new Set(frames.filter((f) => f.type === 'flow').map((f) => String(f.flow_id)));
}

function stepOf(frame: JsonObject, flows: FlowsList): ReturnType<FlowsList['step']> {
  return typeof frame.flow_id === 'string' && typeof frame.step_id === 'string'
    ? flows.step(frame.flow_id, frame.step_id)
    : undefined;
}

/**
 * The collect steps run so far by the current user flow (and patterns on top that are still on
 * the stack), oldest first, each with its flow id (Rasa `previous_collect_steps_for_active_flow`).
 */
function previousCollectSteps(
  frames: readonly JsonObject[],
  previousStates: readonly (readonly JsonObject[])[],
  flows: FlowsList,
): { step: CollectStep; flowId: string }[] {
  const userFrame = topUserFrame(frames);
  if (userFrame === undefined) return [];
  const activeIds = new Set(frames.map((f) => f.frame_id));
  const out: { step: CollectStep; flowId: string }[] = [];
  for (const state of previousStates) {
    const active = topUserFrame(state);
    if (active === undefined || active.frame_id !== userFrame.frame_id) continue;
    const top = state[state.length - 1];
    if (top === undefined || !isFlowFrame(top)) continue;
    const step = stepOf(top, flows);
    if (step === undefined || step.kind !== 'collect') continue;
    if (top.type === 'flow' || activeIds.has(top.frame_id)) {
      out.push({ step, flowId: String(top.flow_id) });
    }
  }
  return out;
}

/** The collect step the conversation is in (a collect frame on top of its flow's frame). */
function currentCollectStep(
  frames: readonly JsonObject[],
  flows: FlowsList,
): CollectStep | undefined {
  const top = frames[frames.length - 1];
  if (top === undefined || top.type !== PATTERN_COLLECT || frames.length < 2) return undefined;
  const below = frames[frames.length - 2] as JsonObject;
  const step = stepOf(below, flows);
  return step?.kind === 'collect' ? step : undefined;
}

// ---------------------------------------------------------------------------------------------
// Slot values

/** Python's `str()` of a JSON value (what Rasa compares slot values with). */
function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
}

const FLOAT_TEXT = /^[+-]?(\d+(_\d+)*(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)(e[+-]?\d+)?$/i;

function boolFromAny(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1;
  if (typeof value === 'string') {
    if (/^\d+$/.test(value)) return Number(value) === 1;
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === 'yes') return true;
    if (v === 'false' || v === 'no') return false;
  }
  return undefined;
}

/**
 * A value coerced to the slot's type as Rasa's slot classes do: `float` parses numbers (and
 * booleans), `bool` reads booleans, 1/0, "true"/"yes"/"false"/"no", `categorical` maps strings
 * to the declared value (exact, then case-insensitive), `list` wraps a single truthy value;
 * otherwise (and when coercion fails) the value is kept as is.
 */
export function coerceSlotValue(slot: SlotDefinition, value: unknown): unknown {
  switch (slot.type) {
    case 'float': {
      if (typeof value === 'number') return value;
      if (typeof value === 'boolean') return value ? 1 : 0;
      if (typeof value === 'string' && FLOAT_TEXT.test(value.trim())) {
        return Number(value.trim().replace(/_/g, ''));
      }
      return value;
    }
    case 'bool': {
      const b = boolFromAny(value);
      return b === undefined ? value : b;
    }
    case 'categorical': {
      if (typeof value !== 'string' || value === '') return value;
      const values = (slot.values ?? []).filter((v) => v !== null).map((v) => pythonStr(v));
      if (values.includes(value)) return value;
      const folded = value.toLowerCase();
      return values.find((v) => v.toLowerCase() === folded) ?? value;
    }
    case 'list':
      return isPythonTruthy(value) && !Array.isArray(value) ? [value] : value;
    default:
      return value;
  }
}

function isPythonTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isJsonObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

function slotDefinition(
  name: string,
  tracker: DialogueStateTracker,
  domain: Domain,
): SlotDefinition | undefined {
  return tracker.slots.find((s) => s.name === name) ?? domain.slot(name);
}

/** Whether the extractor fits the slot's mappings (Rasa decides on the first mapping). */
function extractorFits(slot: SlotDefinition, extractor: SetSlotExtractor): boolean {
  if (extractor === 'CommandPayloadReader') return true;
  const mappings = slot.mappings.length > 0 ? slot.mappings : [{ type: 'from_llm' }];
  const type = typeof mappings[0]?.type === 'string' ? mappings[0].type : 'from_llm';
  if (extractor === 'LLM') return type === 'from_llm';
  return PREDEFINED_MAPPINGS.has(type);
}

// ---------------------------------------------------------------------------------------------
// Clean-up

/** What the clean-up reads: the conversation before this turn's commands run. */
export interface CleanUpInput {
  readonly tracker: DialogueStateTracker;
  readonly flows: FlowsList;
  readonly domain: Domain;
}

function cannotHandle(reason: string | null): Command {
  return { command: 'cannot handle', reason };
}

function hasCoexistenceSlot(input: CleanUpInput): boolean {
  return slotDefinition(ROUTE_TO_CALM_SLOT, input.tracker, input.domain) !== undefined;
}

/**
 * Rasa's `clean_up_commands`: `set slot`s with an unknown slot are dropped, with an extractor
 * that does not fit the slot's mappings become a `cannot handle` (incompatible extractor), and
 * for a slot the current flow already filled (other than the one being asked) become part of a
 * single `correct slot` (or are dropped when nothing changes); a second `cancel flow` or
 * `cannot handle` is dropped, as is a `start flow` of the active flow; `chitchat` becomes
 * `cannot handle` (`cannot_handle_chitchat`) while `pattern_chitchat` triggers the chitchat
 * policy Parley does not have, else it and `knowledge` move to the front; `clarify` survives
 * only as the first of nothing but clarifications; with more commands left, incompatible-extractor
 * `cannot handle`s are dropped.
 */
export function cleanUpCommands(commands: readonly Command[], input: CleanUpInput): Command[] {
  const { tracker, flows } = input;
  const frames = trackerStackFrames(tracker);
  // The slots earlier collect steps of the active flows filled: only `set slot`s need them, and
  // most turns have none (an NLU-triggered flow start), so they are found on first use.
  let filledSlots: ReadonlySet<string> | null = null;
  const filled = (): ReadonlySet<string> =>
    (filledSlots ??= new Set(
      previousCollectSteps(frames, stackStatesOf(tracker.appliedEvents()), flows).map(
        (c) => c.step.collect,
      ),
    ));
  const activeFlow = topUserFrame(frames)?.flow_id ?? null;
  let clean: Command[] = [];
  const has = (name: Command['command']): boolean => clean.some((c) => c.command === name);
  for (const command of commands) {
    switch (command.command) {
      case 'set slot':
        clean = cleanUpSetSlot(clean, command, input, frames, filled);
        break;
      case 'cancel flow':
      case 'cannot handle':
        if (!has(command.command)) clean.push(command);
        break;
      case 'start flow':
        if (command.flow !== activeFlow) clean.push(command);
        break;
      case 'chitchat': {
        const pattern = flows.flow(PATTERN_CHITCHAT);
        const triggersPolicy =
          pattern === undefined ||
          flows
            .allSteps(PATTERN_CHITCHAT)
            .some((s) => s.kind === 'action' && s.action === ACTION_TRIGGER_CHITCHAT);
        clean.unshift(triggersPolicy ? cannotHandle(CANNOT_HANDLE_CHITCHAT) : command);
        break;
      }
      case 'knowledge':
        clean.unshift(command);
        break;
      case 'clarify':
        if (commands.length > 1) {
          const others = commands.filter(
            (c) => !(c.command === 'set slot' && c.name === ROUTE_TO_CALM_SLOT),
          );
          const onlyRoute =
            clean.length === 0 ||
            (clean.length === 1 &&
              clean[0]?.command === 'set slot' &&
              clean[0].name === ROUTE_TO_CALM_SLOT);
          if (others.every((c) => c.command === 'clarify') && onlyRoute) clean.push(command);
        } else {
          clean.push(command);
        }
        break;
      case 'correct slot':
      case 'human handoff':
      case 'skip question':
      case 'repeat':
      case 'restart':
      case 'session start':
      case 'session end':
      case 'error':
      case 'handle code change':
      case 'noop':
        clean.push(command);
    }
  }
  const minimum = hasCoexistenceSlot(input) ? 2 : 1;
  if (clean.length > minimum) {
    clean = clean.filter(
      (c) => !(c.command === 'cannot handle' && c.reason === CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR),
    );
  }
  return clean;
}

function cleanUpSetSlot(
  soFar: Command[],
  command: Extract<Command, { command: 'set slot' }>,
  input: CleanUpInput,
  frames: readonly JsonObject[],
  filled: () => ReadonlySet<string>,
): Command[] {
  const { tracker, flows, domain } = input;
  const out = [...soFar];
  const slot = slotDefinition(command.name, tracker, domain);
  if (slot === undefined) return out;
  if (!extractorFits(slot, command.extractor)) {
    const exists = out.some(
      (c) => c.command === 'cannot handle' && c.reason === CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR,
    );
    if (!exists) out.push(cannotHandle(CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR));
    return out;
  }
  if (command.name === ROUTE_TO_CALM_SLOT || !filled().has(command.name)) {
    out.push(command);
    return out;
  }
  if (currentCollectStep(frames, flows)?.collect === command.name) {
    out.push(command);
    return out;
  }
  const current = tracker.getSlot(command.name);
  if (typeof current === 'string' && current === pythonStr(command.value)) return out;
  const top = topFlowFrame(frames);
  const corrected =
    top?.flow_id === PATTERN_CORRECTION && isJsonObject(top.corrected_slots)
      ? top.corrected_slots
      : {};
  if (
    command.name in corrected &&
    pythonStr(corrected[command.name]) === pythonStr(command.value)
  ) {
    return out;
  }
  const entry = { name: command.name, value: command.value };
  const index = out.findIndex((c) => c.command === 'correct slot');
  const existing = out[index];
  if (existing !== undefined && existing.command === 'correct slot') {
    out[index] = { ...existing, corrected_slots: [...existing.corrected_slots, entry] };
  } else {
    out.push({ command: 'correct slot', corrected_slots: [entry] });
  }
  return out;
}

/** Rasa's invariants: at most one `cancel flow` and one `correct slot`; free-form answers first. */
export function checkCommandInvariants(commands: readonly Command[]): void {
  const count = (name: Command['command']): number =>
    commands.filter((c) => c.command === name).length;
  if (count('cancel flow') > 1) throw new Error('There can only be one cancel flow command.');
  const freeForm = commands.filter((c) => c.command === 'chitchat' || c.command === 'knowledge');
  if (freeForm.some((c, i) => commands[i] !== c)) {
    throw new Error('Free form answer commands must be at start of the predicted command list.');
  }
  if (count('correct slot') > 1) throw new Error('There can only be one correct slots command.');
}

// ---------------------------------------------------------------------------------------------
// Execution

export interface ProcessCommandsInput {
  /** The conversation with the user event (whose `parse_data.commands` are run) applied. */
  readonly tracker: DialogueStateTracker;
  readonly flows: FlowsList;
  readonly domain: Domain;
  /** Timestamp (seconds) for the new events. */
  readonly now: () => number;
  /** New frame ids (default: 8 random characters). */
  readonly newFrameId?: () => string;
}

/** The working copy the commands run against: the stack, slot values and past stack states. */
class WorkingState {
  frames: readonly JsonObject[];
  readonly slots = new Map<string, unknown>();
  states: (readonly JsonObject[])[];

  constructor(
    tracker: DialogueStateTracker,
    private readonly slotDefinitions: readonly SlotDefinition[],
  ) {
    this.frames = trackerStackFrames(tracker);
    this.states = stackStatesOf(tracker.appliedEvents());
    for (const def of slotDefinitions) this.slots.set(def.name, tracker.getSlot(def.name) ?? null);
  }

  apply(event: DialogueEvent): void {
    if (event.type === 'stack') {
      this.frames = applyStackEvent(this.frames, event);
      this.states.push(this.frames);
    } else if (event.type === 'slot') {
      if (this.slots.has(event.name)) this.slots.set(event.name, event.value);
    } else if (event.type === 'session_ended') {
      this.frames = [];
      this.states = [];
      for (const def of this.slotDefinitions) this.slots.set(def.name, def.initialValue ?? null);
    }
  }
}

interface RunContext {
  readonly input: ProcessCommandsInput;
  readonly state: WorkingState;
  /** The stack before any of this turn's commands ran. */
  readonly original: readonly JsonObject[];
  readonly frameId: () => string;
  /** Flows the latest message's commands start (for slot filling ahead of a flow). */
  readonly predictedFlows: readonly string[];
}

function patternFrame(ctx: RunContext, flowId: string, fields: JsonObject = {}): JsonObject {
  return { frame_id: ctx.frameId(), flow_id: flowId, step_id: START_STEP, ...fields, type: flowId };
}

/** Pushes a frame (at `index`, default on top) and returns the `stack` event (if any). */
function pushEvents(ctx: RunContext, frame: JsonObject, index?: number): DialogueEvent[] {
  const stack = new DialogueStack(ctx.state.frames);
  stack.push(frame, index);
  return stackEventList(ctx, stack);
}

function stackEventList(ctx: RunContext, stack: DialogueStack): DialogueEvent[] {
  const event = stackEvent(stack, ctx.state.frames, ctx.input.now());
  return event === null ? [] : [event];
}

/** The original top user flow frame and its flow, when the flow exists. */
function originalUserFlow(ctx: RunContext): { frame: JsonObject; flow: Flow } | undefined {
  const frame = topUserFrame(ctx.original);
  const flow = frame === undefined ? undefined : ctx.input.flows.flow(String(frame.flow_id));
  return frame !== undefined && flow !== undefined ? { frame, flow } : undefined;
}

function runCommand(command: Command, ctx: RunContext): DialogueEvent[] {
  const { flows } = ctx.input;
  const now = ctx.input.now;
  switch (command.command) {
    case 'start flow': {
      if (userFlowIdsOn(ctx.state.frames).has(command.flow)) return [];
      if (flows.flow(command.flow) === undefined) return [];
      const interrupted = originalUserFlow(ctx);
      const events: DialogueEvent[] = [];
      if (interrupted !== undefined) {
        events.push(
          flowInterrupted({
            timestamp: now(),
            flowId: String(interrupted.frame.flow_id),
            stepId: String(interrupted.frame.step_id),
          }),
        );
      }
      const frame: JsonObject = {
        frame_id: ctx.frameId(),
        flow_id: command.flow,
        step_id: START_STEP,
        frame_type: interrupted === undefined ? 'regular' : 'interrupt',
        type: 'flow',
      };
      return [...events, ...pushEvents(ctx, frame)];
    }
    case 'set slot':
      return runSetSlot(command, ctx);
    case 'cancel flow': {
      const current = originalUserFlow(ctx);
      if (current === undefined) return [];
      const canceled: string[] = [];
      for (let i = ctx.original.length - 1; i >= 0; i--) {
        const f = ctx.original[i] as JsonObject;
        canceled.push(String(f.frame_id));
        if (f.type === 'flow' && f.frame_type !== 'call') break;
      }
      const cancelled = flowCancelled({
        timestamp: now(),
        flowId: String(current.frame.flow_id),
        stepId: String(current.frame.step_id),
      });
      const frame = patternFrame(ctx, 'pattern_cancel_flow', {
        canceled_name: current.flow.name,
        canceled_frames: canceled,
      });
      return [cancelled, ...pushEvents(ctx, frame)];
    }
    case 'clarify': {
      const names = command.options.flatMap((id) => {
        const flow = flows.flow(id);
        return flow === undefined ? [] : [flow.name];
      });
      return pushEvents(
        ctx,
        patternFrame(ctx, 'pattern_clarification', { names, clarification_options: '' }),
      );
    }
    case 'chitchat':
      return pushEvents(ctx, patternFrame(ctx, PATTERN_CHITCHAT));
    case 'knowledge':
      return pushEvents(ctx, patternFrame(ctx, 'pattern_search'));
    case 'human handoff':
      return pushEvents(ctx, patternFrame(ctx, 'pattern_human_handoff'));
    case 'skip question':
      if (originalUserFlow(ctx) === undefined) return [];
      return pushEvents(ctx, patternFrame(ctx, 'pattern_skip_question'));
    case 'correct slot':
      return runCorrectSlots(command, ctx);
    case 'cannot handle':
      return pushEvents(
        ctx,
        patternFrame(ctx, 'pattern_cannot_handle', {
          reason: command.reason ?? CANNOT_HANDLE_DEFAULT,
        }),
      );
    case 'repeat':
      return pushEvents(ctx, patternFrame(ctx, 'pattern_repeat_bot_messages'));
    case 'restart':
      return pushEvents(ctx, patternFrame(ctx, 'pattern_restart'));
    case 'session start':
      return pushEvents(ctx, patternFrame(ctx, 'pattern_session_start'));
    case 'session end': {
      const metadata: JsonObject = {
        _reason: 'user disconnected',
        ...ctx.input.tracker.latestMessage.metadata,
      };
      return [sessionEnded({ timestamp: now(), metadata })];
    }
    case 'error':
      return pushEvents(
        ctx,
        patternFrame(ctx, 'pattern_internal_error', {
          error_type: command.error_type,
          info: command.info,
        }),
      );
    case 'handle code change':
      if (originalUserFlow(ctx) === undefined) return [];
      return pushEvents(ctx, patternFrame(ctx, 'pattern_code_change'));
    case 'noop':
      return [];
  }
}

function runSetSlot(
  command: Extract<Command, { command: 'set slot' }>,
  ctx: RunContext,
): DialogueEvent[] {
  const { tracker, domain, flows } = ctx.input;
  const slot = slotDefinition(command.name, tracker, domain);
  if (slot === undefined) return [];
  const value = coerceSlotValue(slot, command.value);
  if (jsonEqual(value, ctx.state.slots.get(command.name) ?? null)) return [];
  const frames = ctx.state.frames;
  const asked = new Set<string>();
  const primary = topUserFrame(frames);
  const any = topUserFrame(frames, true);
  for (const frame of [any, primary]) {
    if (frame === undefined) continue;
    for (const step of flows.collectSteps(String(frame.flow_id))) {
      if (!step.askBeforeFilling) asked.add(step.collect);
    }
  }
  const top = frames[frames.length - 1];
  if (top?.type === PATTERN_COLLECT && typeof top.collect === 'string') asked.add(top.collect);
  if (
    !asked.has(command.name) &&
    command.name !== ROUTE_TO_CALM_SLOT &&
    (command.extractor === 'LLM' || command.extractor === 'CommandPayloadReader')
  ) {
    const fillsAhead = ctx.predictedFlows.some((id) =>
      flows.collectSteps(id).some((s) => s.collect === command.name && !s.askBeforeFilling),
    );
    if (!fillsAhead) return [];
  }
  return [slotSet({ timestamp: ctx.input.now(), name: command.name, value })];
}

function runCorrectSlots(
  command: Extract<Command, { command: 'correct slot' }>,
  ctx: RunContext,
): DialogueEvent[] {
  const { flows } = ctx.input;
  const frames = ctx.state.frames;
  const top = topFlowFrame(frames);
  if (top === undefined) return [];
  const onStack = [...userFlowIdsOn(frames)];
  for (const corrected of command.corrected_slots) {
    const collected = onStack.some((id) =>
      flows.collectSteps(id).some((s) => s.collect === corrected.name),
    );
    if (!collected) return [];
  }
  const proposed: JsonObject = {};
  for (const corrected of command.corrected_slots) {
    if (!jsonEqual(ctx.state.slots.get(corrected.name) ?? null, corrected.value ?? null)) {
      proposed[corrected.name] = corrected.value;
    }
  }
  const isResetOnly = flows.flows.every((flow) =>
    flows.collectSteps(flow.id).every((s) => !(s.collect in proposed) || s.askBeforeFilling),
  );
  const earliest = previousCollectSteps(frames, ctx.state.states, flows).find(
    (c) => c.step.collect in proposed,
  );
  const frame = patternFrame(ctx, PATTERN_CORRECTION, {
    is_reset_only: isResetOnly,
    corrected_slots: proposed,
    reset_flow_id: earliest?.flowId ?? null,
    reset_step_id: earliest?.step.id ?? null,
  });
  const stack = new DialogueStack(frames);
  let index = frames.length;
  if (top.flow_id === PATTERN_CORRECTION) {
    index = frames.findIndex((f) => f.frame_id === top.frame_id);
    for (let i = frames.length - 1; i >= 0; i--) {
      const f = frames[i] as JsonObject;
      if (isFlowFrame(f)) stack.update(i, { step_id: NEXT_END });
      if (f.frame_id === top.frame_id) break;
    }
  }
  stack.push(frame, index);
  return stackEventList(ctx, stack);
}

/** Keeps only the last `slot` event per slot (Rasa `remove_duplicated_set_slots`). */
function lastSlotEventsOnly(events: readonly DialogueEvent[]): DialogueEvent[] {
  const seen = new Set<string>();
  const out: DialogueEvent[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type === 'slot') {
      if (seen.has(e.name)) continue;
      seen.add(e.name);
    }
    out.push(e);
  }
  return out.reverse();
}

/**
 * Rasa Pro's command processor (`execute_commands`): reads the latest user message's commands,
 * cleans them up, replaces them with `handle code change` when a flow on the stack changed
 * (compared with the `flow_hashes` slot), runs them in reverse order against a working copy
 * (each command's events applied before the next runs) and returns the events to log right
 * after the user event: `slot flow_hashes` first when the fingerprints changed, then the
 * commands' events, with only the last `slot` event per slot kept.
 */
export function processCommands(input: ProcessCommandsInput): DialogueEvent[] {
  const { tracker, flows, domain } = input;
  const parsed = commandsFromParseData(tracker.latestMessage.parseData);
  let commands = cleanUpCommands(parsed, { tracker, flows, domain });
  const original = trackerStackFrames(tracker);
  const stored = storedFingerprints(tracker);
  if (changedFlowsOnStack(original, flows, stored).length > 0) {
    commands = [{ command: 'handle code change' }];
  }
  const state = new WorkingState(tracker, tracker.slots);
  const events: DialogueEvent[] = [];
  const fingerprints = sharedFingerprints(flows);
  if (!sameFingerprints(fingerprints, stored)) {
    const value = { ...fingerprints };
    const event = slotSet({ timestamp: input.now(), name: FLOW_HASHES_SLOT, value });
    events.push(event);
    state.apply(event);
  }
  checkCommandInvariants(commands);
  const ctx: RunContext = {
    input,
    state,
    original,
    frameId: input.newFrameId ?? (() => randomFrameId()),
    predictedFlows: parsed.flatMap((c) => (c.command === 'start flow' ? [c.flow] : [])),
  };
  for (const command of [...commands].reverse()) {
    const produced = runCommand(command, ctx);
    for (const event of produced) state.apply(event);
    events.push(...produced);
  }
  return lastSlotEventsOnly(events);
}
