import { type Action, type ActionContext } from 'src/core/actions/action';
import { botUtteranceFrom } from 'src/core/actions/nlg';
import { renderResponse } from 'src/core/actions/nlg-server';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { slotSet } from 'src/core/events/slot-set';
import { START_STEP } from './flow';
import {
  CONTINUE_TO_END,
  isFlowFrame,
  PATTERN_CANCEL_FLOW,
  PATTERN_COLLECT_INFORMATION,
} from './flow-executor';
import { renderTemplate } from './jinja';
import { evaluatePredicate, parsePredicate } from './predicate';
import { DialogueStack, newFrameId } from './stack';
import { previousStackStates, stackEvent } from './stack-events';

/** Names of the built-in CALM actions (Rasa Pro's default actions used by the patterns). */
export const ACTION_RUN_SLOT_REJECTIONS = 'action_run_slot_rejections';
export const ACTION_CORRECT_FLOW_SLOT = 'action_correct_flow_slot';
export const ACTION_CANCEL_FLOW = 'action_cancel_flow';
export const ACTION_CLARIFY_FLOWS = 'action_clarify_flows';
export const ACTION_CLEAN_STACK = 'action_clean_stack';
export const ACTION_TRIGGER_CHITCHAT = 'action_trigger_chitchat';
export const ACTION_TRIGGER_SEARCH = 'action_trigger_search';
export const ACTION_REPEAT_BOT_MESSAGES = 'action_repeat_bot_messages';

const PATTERN_CORRECTION = 'pattern_correction';
const PATTERN_CLARIFICATION = 'pattern_clarification';
const PATTERN_REPEAT_BOT_MESSAGES = 'pattern_repeat_bot_messages';
const PATTERN_USER_SILENCE = 'pattern_user_silence';
const UTTER_INTERNAL_ERROR = 'utter_internal_error_rasa';
const UTTER_CATEGORICAL_SLOT_REJECTION = 'utter_categorical_slot_rejection';

/** The tracker's stack as a working copy. */
function stackOf(ctx: ActionContext): DialogueStack {
  return new DialogueStack(ctx.tracker.stack);
}

/** The `stack` event taking the tracker's stack to `stack` (none when nothing changed). */
function stackUpdate(ctx: ActionContext, stack: DialogueStack): DialogueEvent[] {
  const event = stackEvent(stack, ctx.tracker.stack, ctx.now());
  return event === null ? [] : [event];
}

/** Options joined as "a, b or c" (Rasa's `assemble_options_string`). */
export function joinOptions(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1] as string}`;
}

/** Strings a generator writes for "no value". */
const NONE_VALUES = new Set(['[missing information]', '[missing]', 'None', 'undefined', 'null']);

/** Python's `bool_from_any`; throws when the value cannot be read as a bool. */
function boolFromAny(x: unknown): boolean {
  if (typeof x === 'boolean') return x;
  if (typeof x === 'number') return x === 1;
  if (typeof x === 'string') {
    if (/^\d+$/.test(x)) return Number(x) === 1;
    const t = x.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
  }
  throw new TypeError('Cannot convert to bool');
}

/** Python's `float()`; throws when the value cannot be read as a number. */
function floatFromAny(x: unknown): number {
  if (typeof x === 'number') return x;
  if (typeof x === 'boolean') return x ? 1 : 0;
  if (typeof x === 'string' && x.trim() !== '') {
    const n = Number(x.trim());
    if (!Number.isNaN(n)) return n;
  }
  throw new TypeError('Cannot convert to float');
}

/** The slot value typed as the slot's type (bool / float); null when it does not convert. */
function coerceSlotValue(ctx: ActionContext, name: string, value: unknown): unknown {
  const nullable = typeof value === 'string' && NONE_VALUES.has(value) ? null : value;
  // No value converts to no value (without the cost of a thrown error).
  if (nullable === null || nullable === undefined) return null;
  const type = ctx.domain.slot(name)?.type;
  try {
    if (type === 'bool') return boolFromAny(nullable);
    if (type === 'float') return floatFromAny(nullable);
  } catch {
    return null;
  }
  return nullable;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether any applied `slot` event set the slot (Rasa's `Slot.has_been_set`). */
function hasBeenSet(ctx: ActionContext, name: string): boolean {
  return ctx.tracker.appliedEvents().some((e) => e.type === 'slot' && e.name === name);
}

/** The rejection response a value gets, with the slot reset; null: the value is accepted. */
function rejectionFor(
  ctx: ActionContext,
  frame: JsonObject,
  stack: DialogueStack,
  name: string,
  value: unknown,
): string | null {
  const rejections = Array.isArray(frame.rejections) ? (frame.rejections as unknown[]) : [];
  if (rejections.length > 0) {
    const context = stack.context();
    const slots = { ...ctx.tracker.slotValuesObject(), [name]: value };
    for (const rejection of rejections) {
      if (!isJsonObject(rejection) || typeof rejection.if !== 'string') continue;
      const rendered = renderTemplate(rejection.if, { context });
      try {
        parsePredicate(rendered);
      } catch {
        // A condition that cannot be read counts as a violation reported as an internal error.
        return UTTER_INTERNAL_ERROR;
      }
      if (evaluatePredicate(rendered, { context, slots })) {
        return typeof rejection.utter === 'string' ? rejection.utter : null;
      }
    }
    return null;
  }
  const slot = ctx.domain.slot(name);
  if (slot?.type === 'categorical' && !(slot.values ?? []).some((v) => sameValue(v, value))) {
    return UTTER_CATEGORICAL_SLOT_REJECTION;
  }
  return null;
}

/**
 * `action_run_slot_rejections` (the collect pattern's first step): nothing until the collected
 * slot has been set; then the value is typed (bool / float slots), the step's rejections are
 * evaluated in order (the first that holds rejects; a condition that cannot be parsed answers
 * `utter_internal_error_rasa`) — or, without rejections, a categorical slot rejects values it
 * does not list (`utter_categorical_slot_rejection`). A rejection resets the slot and utters
 * its response (metadata `utter_action`); an accepted value whose type changed is set typed.
 */
export class RunSlotRejectionsAction implements Action {
  readonly name = ACTION_RUN_SLOT_REJECTIONS;

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const stack = stackOf(ctx);
    const top = stack.top();
    if (top?.type !== PATTERN_COLLECT_INFORMATION || typeof top.collect !== 'string') return [];
    const name = top.collect;
    if (ctx.domain.slot(name) !== undefined && !hasBeenSet(ctx, name)) return [];
    const value = ctx.tracker.getSlot(name);
    const typed = coerceSlotValue(ctx, name, value);
    const utterance = rejectionFor(ctx, top, stack, name, typed);
    const events: DialogueEvent[] = [];
    if (utterance !== null) events.push(slotSet({ name, value: null, timestamp: ctx.now() }));
    else if (!sameValue(value ?? null, typed)) {
      events.push(slotSet({ name, value: typed, timestamp: ctx.now() }));
    }
    if (utterance === null) return events;
    const message = await renderResponse(ctx, utterance);
    if (message === null) {
      ctx.warn?.(`Couldn't find the rejection response '${utterance}'.`, { response: utterance });
      return events;
    }
    events.push(botUtteranceFrom(message, ctx.now(), utterance));
    return events;
  }
}

/**
 * The stack a correction goes back to: frames of the current stack below the target user flow
 * frame, the target and everything above it from the latest past state whose top stood on
 * `flowId` / `stepId` (its topmost flow frame set to `NEXT:<its step>` so that step runs again),
 * then the frames of the current stack left out (call and collect frames set to `NEXT:END`).
 */
function stackResetTo(ctx: ActionContext, flowId: string, stepId: string): DialogueStack {
  const current = stackOf(ctx);
  let reference: DialogueStack | undefined;
  for (const state of previousStackStates(ctx.tracker)) {
    const candidate = new DialogueStack(state);
    const top = candidate.top();
    if (isFlowFrame(top) && top.flow_id === flowId && top.step_id === stepId) {
      reference = candidate;
    }
  }
  const target = reference?.topUserFlowFrame();
  if (reference === undefined || target === undefined) return current;
  const frames: JsonObject[] = [];
  for (const frame of current.toJSON()) {
    if (frame.frame_id === target.frame_id) break;
    frames.push(frame);
  }
  const old = reference.toJSON();
  const from = old.findIndex((f) => f.frame_id === target.frame_id);
  frames.push(...old.slice(from));
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i] as JsonObject;
    if (isFlowFrame(frame) && frame.step_id !== START_STEP) {
      frames[i] = { ...frame, step_id: `NEXT:${String(frame.step_id)}` };
      break;
    }
  }
  const reused = new Set(frames.map((f) => f.frame_id));
  const terminated: JsonObject[] = [];
  for (const frame of current.toJSON().reverse()) {
    if (reused.has(frame.frame_id)) continue;
    const ends =
      (frame.type === 'flow' && frame.frame_type === 'call') ||
      frame.type === PATTERN_COLLECT_INFORMATION;
    terminated.unshift(ends ? { ...frame, step_id: CONTINUE_TO_END } : frame);
  }
  return new DialogueStack([...frames, ...terminated]);
}

/**
 * `action_correct_flow_slot` (pattern_correction): with a `reset_flow_id`, moves the stack back
 * to where that flow stood on `reset_step_id` (a `stack` event); then sets the corrected slots.
 */
export class CorrectFlowSlotAction implements Action {
  readonly name = ACTION_CORRECT_FLOW_SLOT;

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const top = stackOf(ctx).top();
    if (top?.type !== PATTERN_CORRECTION) return Promise.resolve([]);
    const events: DialogueEvent[] = [];
    if (typeof top.reset_flow_id === 'string' && top.reset_flow_id !== '') {
      const step = typeof top.reset_step_id === 'string' ? top.reset_step_id : START_STEP;
      events.push(...stackUpdate(ctx, stackResetTo(ctx, top.reset_flow_id, step)));
    }
    const corrected = isJsonObject(top.corrected_slots) ? top.corrected_slots : {};
    for (const [name, entry] of Object.entries(corrected)) {
      // Classic frames hold `{slot: value}`, newer ones `{slot: {value, filled_by}}`.
      const value =
        isJsonObject(entry) && 'value' in entry && 'filled_by' in entry ? entry.value : entry;
      events.push(slotSet({ name, value, timestamp: ctx.now() }));
    }
    return Promise.resolve(events);
  }
}

/**
 * `action_cancel_flow` (pattern_cancel_flow): sets every frame the cancel frame lists
 * (`canceled_frames`) to `NEXT:END`, so each wraps up normally.
 */
export class CancelFlowAction implements Action {
  readonly name = ACTION_CANCEL_FLOW;

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const stack = stackOf(ctx);
    const top = stack.top();
    if (top?.type !== PATTERN_CANCEL_FLOW) return Promise.resolve([]);
    const ids = Array.isArray(top.canceled_frames) ? (top.canceled_frames as unknown[]) : [];
    for (const id of ids) {
      for (let i = 0; i < stack.size; i++) {
        const frame = stack.at(i) as JsonObject;
        if (frame.frame_id === id && isFlowFrame(frame)) {
          stack.update(i, { step_id: CONTINUE_TO_END });
          break;
        }
      }
    }
    return Promise.resolve(stackUpdate(ctx, stack));
  }
}

/**
 * `action_clarify_flows` (pattern_clarification): writes the flow names as "a, b or c" into the
 * frame's `clarification_options`.
 */
export class ClarifyFlowsAction implements Action {
  readonly name = ACTION_CLARIFY_FLOWS;

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const stack = stackOf(ctx);
    const top = stack.top();
    if (top?.type !== PATTERN_CLARIFICATION) return Promise.resolve([]);
    const names = Array.isArray(top.names) ? (top.names as unknown[]).map(String) : [];
    stack.update(stack.size - 1, { clarification_options: joinOptions(names) });
    return Promise.resolve(stackUpdate(ctx, stack));
  }
}

/**
 * `action_clean_stack` (pattern_code_change): every flow frame set to `NEXT:END` (user frames as
 * `regular`, so no interrupted flow is resumed); other frames are dropped.
 */
export class CleanStackAction implements Action {
  readonly name = ACTION_CLEAN_STACK;

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const frames = stackOf(ctx)
      .toJSON()
      .filter(isFlowFrame)
      .map((frame) =>
        frame.type === 'flow'
          ? { ...frame, step_id: CONTINUE_TO_END, frame_type: 'regular' }
          : { ...frame, step_id: CONTINUE_TO_END },
      );
    return Promise.resolve(stackUpdate(ctx, new DialogueStack(frames)));
  }
}

/** Pushes a frame of another policy (`chitchat` / `search`) on the stack. */
class PushFrameAction implements Action {
  constructor(
    readonly name: string,
    private readonly frameType: 'chitchat' | 'search',
    private readonly frameId: () => string,
  ) {}

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const stack = stackOf(ctx);
    stack.push({ frame_id: this.frameId(), type: this.frameType });
    return Promise.resolve(stackUpdate(ctx, stack));
  }
}

/**
 * `action_repeat_bot_messages` (pattern_repeat_bot_messages): the bot messages of the latest
 * stretch of bot messages before the latest user message, sent again (with new timestamps).
 * Nothing inside a collect, whose question is repeated anyway.
 */
export class RepeatBotMessagesAction implements Action {
  readonly name = ACTION_REPEAT_BOT_MESSAGES;

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const top = stackOf(ctx).top(
      (f) => f.type === PATTERN_REPEAT_BOT_MESSAGES || f.type === PATTERN_USER_SILENCE,
    );
    if (top?.type === PATTERN_COLLECT_INFORMATION) return Promise.resolve([]);
    const bots: DialogueEvent[] = [];
    const events = ctx.tracker.events;
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as DialogueEvent;
      if (e.type === 'bot') bots.unshift(e);
      else if (e.type === 'user' && bots.length > 0) break;
    }
    return Promise.resolve(bots.map((e) => ({ ...e, timestamp: ctx.now() })));
  }
}

/** The built-in CALM actions by name. */
export function patternActions(frameId: () => string = () => newFrameId()): Map<string, Action> {
  const list: Action[] = [
    new RunSlotRejectionsAction(),
    new CorrectFlowSlotAction(),
    new CancelFlowAction(),
    new ClarifyFlowsAction(),
    new CleanStackAction(),
    new PushFrameAction(ACTION_TRIGGER_CHITCHAT, 'chitchat', frameId),
    new PushFrameAction(ACTION_TRIGGER_SEARCH, 'search', frameId),
    new RepeatBotMessagesAction(),
  ];
  return new Map(list.map((a) => [a.name, a]));
}
