import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import {
  carryStackStep,
  stackAfter,
  type DialogueStackUpdated,
} from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { flowCompleted } from 'src/core/events/flow-completed';
import { flowResumed } from 'src/core/events/flow-resumed';
import { flowStarted } from 'src/core/events/flow-started';
import { slotSet } from 'src/core/events/slot-set';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import {
  CONTINUE_STEP_PREFIX,
  END_STEP,
  START_STEP,
  type Flow,
  type FlowStep,
  type StepNext,
} from './flow';
import { type FlowsList } from './flows-list';
import { renderTemplate } from './jinja';
import { evaluatePredicate } from './predicate';
import { DialogueStack, newFrameId as randomFrameId } from './stack';
import { stackEvent } from './stack-events';

/** Steps one prediction may take before the circuit breaker trips (Rasa's `MAX_NUMBER_OF_STEPS`). */
export const MAX_NUMBER_OF_STEPS = 250;

/** `NEXT:END`: a frame set to wrap up (cancelled, cleaned, ended by the circuit breaker). */
export const CONTINUE_TO_END = `${CONTINUE_STEP_PREFIX}${END_STEP}`;

export const PATTERN_COLLECT_INFORMATION = 'pattern_collect_information';
export const PATTERN_COMPLETED = 'pattern_completed';
export const PATTERN_CONTINUE_INTERRUPTED = 'pattern_continue_interrupted';
export const PATTERN_CANCEL_FLOW = 'pattern_cancel_flow';
export const PATTERN_INTERNAL_ERROR = 'pattern_internal_error';
export const PATTERN_HUMAN_HANDOFF = 'pattern_human_handoff';
export const PATTERN_SEARCH = 'pattern_search';

export interface AdvanceFlowsInput {
  readonly tracker: DialogueStateTracker;
  readonly flows: FlowsList;
  readonly domain: Domain;
  /** Event timestamps (seconds). */
  readonly now: () => number;
  /** Ids of new frames (default: 8 random characters, as Rasa's). */
  readonly newFrameId?: () => string;
}

/** What the flows say next (Rasa's `FlowActionPrediction`). */
export interface FlowPrediction {
  /** The action to run (score 1.0); null: no prediction (empty stack, or no recovery). */
  readonly actionName: string | null;
  /** Every event of the steps taken, in order (`stack` updates, flow events, slots). */
  readonly events: DialogueEvent[];
  /** The stack's context after the steps (bot messages of the action carry it). */
  readonly metadata: { readonly active_flow: string | null; readonly step_id: string | null };
}

/** A step the executor can stand on: a flow's step, or a synthetic START / END / `NEXT:x`. */
type ExecStep =
  | FlowStep
  | { readonly kind: 'start'; readonly id: string; readonly next: string }
  | { readonly kind: 'end'; readonly id: string }
  | { readonly kind: 'continue'; readonly id: string; readonly next: string };

/** A step with no way on (branches without a match and no `else`, or no `next`). */
class NoNextStepError extends Error {}

/** Thrown inside a run when more than `MAX_NUMBER_OF_STEPS` steps were taken. */
class CircuitBreakerTripped extends Error {}

/** A pattern frame as Rasa serialises it: ids first, the pattern's own fields, then `type`. */
export function patternFrame(flowId: string, frameId: string, fields: JsonObject = {}): JsonObject {
  return { frame_id: frameId, flow_id: flowId, step_id: START_STEP, ...fields, type: flowId };
}

/** A user flow frame (`type: "flow"`). */
export function userFlowFrame(
  flowId: string,
  frameId: string,
  frameType: 'regular' | 'interrupt' | 'link' | 'call',
): JsonObject {
  return {
    frame_id: frameId,
    flow_id: flowId,
    step_id: START_STEP,
    frame_type: frameType,
    type: 'flow',
  };
}

/** Whether a frame belongs to a flow (user flow or pattern), not to another policy. */
export function isFlowFrame(frame: JsonObject | undefined): frame is JsonObject {
  return (
    frame !== undefined && typeof frame.flow_id === 'string' && typeof frame.step_id === 'string'
  );
}

/**
 * Frame ids a cancel ends: from the top down to, and including, the topmost user flow frame that
 * was not started by a `call` step (Rasa's `select_canceled_frames`).
 */
export function selectCanceledFrames(stack: DialogueStack): string[] {
  const ids: string[] = [];
  for (let i = stack.size - 1; i >= 0; i--) {
    const frame = stack.at(i) as JsonObject;
    ids.push(String(frame.frame_id));
    if (frame.type === 'flow' && frame.frame_type !== 'call') return ids;
  }
  return ids;
}

/**
 * Sets every flow frame from the top down to, and including, the first user flow frame to
 * `NEXT:END` (Rasa's `end_top_user_flow`).
 */
export function endTopUserFlow(stack: DialogueStack): void {
  for (let i = stack.size - 1; i >= 0; i--) {
    const frame = stack.at(i) as JsonObject;
    if (!isFlowFrame(frame)) continue;
    stack.update(i, { step_id: CONTINUE_TO_END });
    if (frame.type === 'flow') break;
  }
}

/**
 * Rasa's `advance_flows`: runs the flows on the stack, step by step on a working copy, until a
 * step predicts an action, the stack holds no flow frame any more (then `action_listen`), or the
 * circuit breaker trips after `MAX_NUMBER_OF_STEPS` steps. A trip — or a step with no way on —
 * ends the top user flow, pushes `pattern_internal_error` and runs once more from the original
 * stack. An empty stack gives no prediction.
 *
 * Rasa writes a `stack` event after choosing each step and after running it; here the changes
 * between two other events go out as one `stack` event (its patch the diff over the run of
 * changes), except that the move onto a collect step keeps its own. The tracker ends on the
 * same stack; the states in between that no event separates are not stored.
 */
export function advanceFlows(input: AdvanceFlowsInput): FlowPrediction {
  const original = input.tracker.stack;
  if (original.length === 0) return noPrediction();
  const first = new FlowRun(input, original);
  try {
    return inTimeOrder(first.run());
  } catch (error) {
    if (!(error instanceof CircuitBreakerTripped || error instanceof NoNextStepError)) throw error;
  }
  const retry = new FlowRun(input, original);
  endTopUserFlow(retry.stack);
  retry.stack.push(patternFrame(PATTERN_INTERNAL_ERROR, retry.frameId(), internalErrorFields()));
  try {
    return inTimeOrder(retry.run());
  } catch (error) {
    if (!(error instanceof CircuitBreakerTripped || error instanceof NoNextStepError)) throw error;
    return noPrediction();
  }
}

/**
 * The events' times in list order. A step's `stack` event takes a time from before the step
 * stamps its own events, but `flow_completed` (stamped after the step) goes ahead of the
 * `flow_resumed` an interrupt's end produced: then the clock's values are handed out again in
 * list order (copies of the events), so the events' times never go back.
 */
function inTimeOrder(prediction: FlowPrediction): FlowPrediction {
  const times = prediction.events.map((e) => e.timestamp);
  if (times.every((t, i) => i === 0 || (times[i - 1] as number) <= t)) return prediction;
  times.sort((a, b) => a - b);
  return {
    ...prediction,
    events: prediction.events.map((e, i) => {
      const copy = { ...e, timestamp: times[i] as number };
      if (e.type === 'stack') carryStackStep(e, copy as DialogueStackUpdated);
      return copy;
    }),
  };
}

function noPrediction(): FlowPrediction {
  return { actionName: null, events: [], metadata: { active_flow: null, step_id: null } };
}

function internalErrorFields(): JsonObject {
  return { error_type: 'rasa_internal_error_default', info: {} };
}

interface StepResult {
  readonly events: DialogueEvent[];
  /** The action the step predicts (stops the loop). */
  readonly action?: string;
  /** The step ended (popped) its flow's frame. */
  readonly ended?: boolean;
}

/** The domain's action names as a set, built once per domain (a Domain never changes). */
const ACTION_SETS = new WeakMap<Domain, ReadonlySet<string>>();

function actionSetOf(domain: Domain): ReadonlySet<string> {
  let known = ACTION_SETS.get(domain);
  if (known === undefined) {
    known = new Set(domain.actionNamesOrTexts);
    ACTION_SETS.set(domain, known);
  }
  return known;
}

/** One run of the loop: the working stack, the slot values as the events leave them, the events. */
class FlowRun {
  readonly stack: DialogueStack;
  /** The stack as the events so far leave it. */
  private committed: readonly unknown[];
  private readonly slots: JsonObject;
  private readonly events: DialogueEvent[] = [];
  private readonly flows: FlowsList;
  private readonly domain: Domain;
  private readonly now: () => number;
  private readonly actions: ReadonlySet<string>;

  constructor(
    private readonly input: AdvanceFlowsInput,
    stack: readonly unknown[],
  ) {
    this.stack = new DialogueStack(stack);
    // The tracker's own list (never changed in place): the first stack event then knows what it
    // leads to when the tracker applies it.
    this.committed = stack;
    this.slots = input.tracker.slotValuesObject();
    this.flows = input.flows;
    this.domain = input.domain;
    this.now = input.now;
    this.actions = actionSetOf(input.domain);
  }

  frameId(): string {
    return (this.input.newFrameId ?? randomFrameId)();
  }

  /** Emits a `stack` event for the changes since the last one (none when nothing changed). */
  private commitStack(timestamp: number = this.now()): void {
    const event = stackEvent(this.stack, this.committed, timestamp);
    if (event !== null) {
      this.events.push(event);
      this.committed = stackAfter(this.committed, event);
    }
  }

  private emit(events: readonly DialogueEvent[]): void {
    for (const e of events) {
      this.events.push(e);
      if (e.type === 'slot') this.slots[e.name] = e.value;
    }
  }

  run(): FlowPrediction {
    let action: string | null = null;
    for (let steps = 1; action === null; steps++) {
      if (steps > MAX_NUMBER_OF_STEPS) throw new CircuitBreakerTripped();
      const top = this.stack.top();
      if (!isFlowFrame(top)) {
        // No flow left to run: wait for the user.
        action = ACTION_LISTEN_NAME;
        break;
      }
      const flowId = String(top.flow_id);
      const flow = this.flows.flow(flowId);
      const previousStepId = String(top.step_id);
      const next = this.step(flow, this.selectNextStepId(this.step(flow, previousStepId)));
      this.stack.update(this.stack.size - 1, { step_id: next.id });
      // The move onto a collect step keeps a `stack` event of its own (as in Rasa's trace): the
      // stack state with the flow on its collect step, below no collect frame yet, is what
      // corrections and the slots a flow already filled look back for.
      if (next.kind === 'collect') this.commitStack();
      // The time of the `stack` event that goes out ahead of the step's events, taken before
      // the step stamps them: the events are then in time order as listed.
      const stamp = this.now();
      const result = this.runStep(next, flow, flowId, previousStepId);
      const events = [...result.events];
      if (result.ended) {
        // `flow_completed` goes before the `flow_resumed` an interrupt's end produced.
        const at = events.at(-1)?.type === 'flow_resumed' ? events.length - 1 : events.length;
        events.splice(
          at,
          0,
          flowCompleted({ flowId, stepId: previousStepId, timestamp: this.now() }),
        );
      }
      if (events.length > 0) {
        // Stack changes since the last event go out as one `stack` event, ahead of the step's.
        this.commitStack(stamp);
        this.emit(events);
      }
      if (result.action !== undefined) action = result.action;
    }
    this.commitStack();
    const context = this.stack.context();
    return {
      actionName: action,
      events: this.events,
      metadata: {
        active_flow: typeof context.flow_id === 'string' ? context.flow_id : null,
        step_id: typeof context.step_id === 'string' ? context.step_id : null,
      },
    };
  }

  /**
   * The step a frame stands on. An unknown flow or step counts as `END`, so the frame is popped
   * (Rasa raises instead).
   */
  private step(flow: Flow | undefined, id: string): ExecStep {
    if (flow === undefined) return { kind: 'end', id: END_STEP };
    if (id === START_STEP) {
      return { kind: 'start', id, next: flow.steps[0]?.id ?? END_STEP };
    }
    if (id === END_STEP) return { kind: 'end', id };
    if (id.startsWith(CONTINUE_STEP_PREFIX)) {
      return { kind: 'continue', id, next: id.slice(CONTINUE_STEP_PREFIX.length) };
    }
    return this.flows.step(flow.id, id) ?? { kind: 'end', id: END_STEP };
  }

  /** Rasa's `select_next_step_id`: a static link, the first `if` that holds, else `else`. */
  private selectNextStepId(step: ExecStep): string {
    if (step.kind === 'start' || step.kind === 'continue') return step.next;
    if (step.kind === 'end') return END_STEP;
    const next: StepNext | null = step.next;
    if (typeof next === 'string') return next;
    if (next === null) {
      if (step.kind === 'link') return END_STEP;
      throw new NoNextStepError(`Step '${step.id}' has no next step.`);
    }
    const context = this.stack.context();
    for (const branch of next) {
      if ('if' in branch && this.holds(branch.if, context)) return targetOf(branch.then);
    }
    for (const branch of next) {
      if ('else' in branch) return targetOf(branch.else);
    }
    throw new NoNextStepError(`No branch of step '${step.id}' applies.`);
  }

  /** A condition, rendered with the stack context first, against `{context, slots}`. */
  private holds(condition: string, context: JsonObject): boolean {
    const rendered = renderTemplate(condition, { context });
    return evaluatePredicate(rendered, { context, slots: { ...this.slots } });
  }

  private runStep(
    step: ExecStep,
    flow: Flow | undefined,
    flowId: string,
    previousStepId: string,
  ): StepResult {
    const events: DialogueEvent[] = [];
    if (previousStepId === START_STEP && flow !== undefined) {
      // The flow's first real step: `flow_started` with the context at this point.
      events.push(flowStarted({ flowId, metadata: this.stack.context(), timestamp: this.now() }));
    }
    switch (step.kind) {
      case 'action': {
        const name = renderTemplate(step.action, { context: this.stack.context() });
        // Not an action of the domain (e.g. the collect pattern's optional `validate_<slot>`):
        // skipped.
        return this.actions.has(name) ? { events, action: name } : { events };
      }
      case 'collect':
        return { events: [...events, ...this.runCollect(step, flow)] };
      case 'set_slots':
        for (const { name, value } of step.slots) {
          events.push(slotSet({ name, value, timestamp: this.now() }));
        }
        return { events };
      case 'link': {
        const frame =
          step.link === PATTERN_HUMAN_HANDOFF
            ? patternFrame(PATTERN_HUMAN_HANDOFF, this.frameId())
            : userFlowFrame(step.link, this.frameId(), 'link');
        // Below the current frame: it starts once this flow has ended.
        this.stack.push(frame, -1);
        return { events };
      }
      case 'call':
        this.stack.push(userFlowFrame(step.call, this.frameId(), 'call'));
        return { events };
      case 'end':
        return { events: [...events, ...this.runEnd(flow)], ended: true };
      case 'noop':
      case 'start':
      case 'continue':
        return { events };
    }
  }

  private runCollect(
    step: Extract<FlowStep, { kind: 'collect' }>,
    flow: Flow | undefined,
  ): DialogueEvent[] {
    const slot = this.domain.slot(step.collect);
    const askable =
      (slot !== undefined && slot.initialValue !== null && slot.initialValue !== undefined) ||
      this.actions.has(step.utter) ||
      this.actions.has(step.collectAction);
    if (!askable) {
      // Nothing can ask for the slot: cancel the flow and report an internal error.
      if (isFlowFrame(this.stack.top())) {
        this.stack.push(
          patternFrame(PATTERN_CANCEL_FLOW, this.frameId(), {
            canceled_name: flow?.name ?? '',
            canceled_frames: selectCanceledFrames(this.stack),
          }),
        );
      }
      this.stack.push(patternFrame(PATTERN_INTERNAL_ERROR, this.frameId(), internalErrorFields()));
      return [];
    }
    this.stack.push(
      patternFrame(PATTERN_COLLECT_INFORMATION, this.frameId(), {
        collect: step.collect,
        utter: step.utter,
        collect_action: step.collectAction,
        rejections: step.rejections.map((r) => ({ if: r.if, utter: r.utter })),
      }),
    );
    return slot !== undefined && step.askBeforeFilling
      ? [slotSet({ name: step.collect, value: null, timestamp: this.now() })]
      : [];
  }

  /** `END`: pops the frame, pushes `pattern_completed` / `pattern_continue_interrupted`, resets slots. */
  private runEnd(flow: Flow | undefined): DialogueEvent[] {
    const frame = this.stack.pop() as JsonObject;
    const isUserFrame = frame.type === 'flow';
    if (
      this.stack.isEmpty &&
      (isUserFrame || frame.type === PATTERN_SEARCH) &&
      (flow === undefined || flow.runPatternCompleted)
    ) {
      this.stack.push(
        patternFrame(PATTERN_COMPLETED, this.frameId(), { previous_flow_name: flow?.name ?? null }),
      );
    }
    const resumed: DialogueEvent[] = [];
    if (isUserFrame && frame.frame_type === 'interrupt') {
      const below = this.stack.topUserFlowFrame();
      const belowFlow = below === undefined ? undefined : this.flows.flow(below.flow_id);
      if (
        below !== undefined &&
        belowFlow !== undefined &&
        below.step_id !== END_STEP &&
        below.step_id !== CONTINUE_TO_END
      ) {
        this.stack.push(
          patternFrame(PATTERN_CONTINUE_INTERRUPTED, this.frameId(), {
            previous_flow_name: belowFlow.name,
          }),
        );
        resumed.push(
          flowResumed({ flowId: below.flow_id, stepId: below.step_id, timestamp: this.now() }),
        );
      }
    }
    const reset = isUserFrame && frame.frame_type === 'call' ? [] : this.resetSlots(flow);
    return [...reset, ...resumed];
  }

  /**
   * Slots a flow scopes, back to their initial values when it ends: collected slots with
   * `reset_after_flow_ends`, then slots of `set_slots` steps not collected without reset —
   * called flows' steps included, `persisted_slots` kept.
   */
  private resetSlots(flow: Flow | undefined): DialogueEvent[] {
    if (flow === undefined) return [];
    const steps = this.stepsWithCallsResolved(flow.id, new Set());
    const persisted = new Set(flow.persistedSlots);
    const kept = new Set<string>();
    const names: string[] = [];
    for (const step of steps) {
      if (step.kind !== 'collect') continue;
      if (step.resetAfterFlowEnds && !persisted.has(step.collect)) names.push(step.collect);
      else kept.add(step.collect);
    }
    for (const step of steps) {
      if (step.kind !== 'set_slots') continue;
      for (const { name } of step.slots) {
        if (!kept.has(name) && !persisted.has(name)) names.push(name);
      }
    }
    return names.map((name) =>
      slotSet({ name, value: this.domain.slot(name)?.initialValue ?? null, timestamp: this.now() }),
    );
  }

  private stepsWithCallsResolved(flowId: string, seen: Set<string>): FlowStep[] {
    seen.add(flowId);
    const out: FlowStep[] = [];
    for (const step of this.flows.allSteps(flowId)) {
      if (step.kind === 'call' && !seen.has(step.call)) {
        out.push(...this.stepsWithCallsResolved(step.call, seen));
      } else out.push(step);
    }
    return out;
  }
}

function targetOf(target: string | readonly FlowStep[]): string {
  return typeof target === 'string' ? target : (target[0]?.id ?? END_STEP);
}
