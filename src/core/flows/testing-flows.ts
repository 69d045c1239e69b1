import { actionFor } from 'src/core/actions/action-registry';
import { type Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { dialogueStackUpdated } from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { type CollectStep, END_STEP, type Flow, type FlowStep, type StepNext } from './flow';
import { advanceFlows, type FlowPrediction } from './flow-executor';
import { type FlowsList } from './flows-list';
import { DialogueStack } from './stack';

/**
 * Hand-built flows and a small driver for the specs of the executor, the policy and the
 * pattern actions (no YAML reader involved).
 */

type Base = { id: string; next?: StepNext | null };

function base(b: Base): Omit<FlowStep, 'kind'> & { next: StepNext | null } {
  return { id: b.id, idGiven: true, next: b.next ?? null, description: null, metadata: null };
}

export const step = {
  action: (id: string, action: string, next?: StepNext): FlowStep => ({
    ...base({ id, next }),
    kind: 'action',
    action,
  }),
  collect: (
    id: string,
    slot: string,
    options: Partial<
      Pick<CollectStep, 'utter' | 'askBeforeFilling' | 'resetAfterFlowEnds' | 'rejections'>
    > & {
      next?: StepNext;
    } = {},
  ): FlowStep => ({
    ...base({ id, next: options.next }),
    kind: 'collect',
    collect: slot,
    utter: options.utter ?? `utter_ask_${slot}`,
    collectAction: `action_ask_${slot}`,
    askBeforeFilling: options.askBeforeFilling ?? false,
    resetAfterFlowEnds: options.resetAfterFlowEnds ?? true,
    rejections: options.rejections ?? [],
  }),
  setSlots: (id: string, slots: Record<string, unknown>, next?: StepNext): FlowStep => ({
    ...base({ id, next }),
    kind: 'set_slots',
    slots: Object.entries(slots).map(([name, value]) => ({ name, value })),
  }),
  link: (id: string, link: string): FlowStep => ({ ...base({ id }), kind: 'link', link }),
  call: (id: string, call: string, next?: StepNext): FlowStep => ({
    ...base({ id, next }),
    kind: 'call',
    call,
  }),
  noop: (id: string, next: StepNext): FlowStep => ({ ...base({ id, next }), kind: 'noop' }),
};

/** Top-level steps with the implicit `next` made explicit (following sibling, then END). */
function chain(steps: readonly FlowStep[]): FlowStep[] {
  return steps.map((s, i) =>
    s.next !== null || s.kind === 'link' ? s : { ...s, next: steps[i + 1]?.id ?? END_STEP },
  );
}

export function flow(id: string, steps: readonly FlowStep[], extra: Partial<Flow> = {}): Flow {
  return {
    id,
    name: id.replace(/[_-]/g, ' '),
    description: `The ${id} flow.`,
    guard: null,
    nluTrigger: [],
    alwaysIncludeInPrompt: null,
    persistedSlots: [],
    runPatternCompleted: true,
    filePath: null,
    builtIn: id.startsWith('pattern_'),
    ...extra,
    steps: chain(extra.steps ?? steps),
  };
}

/** The classic default patterns the specs need, as §8 of the reference describes them. */
export const PATTERNS: readonly Flow[] = [
  flow('pattern_collect_information', [
    step.action('start', 'action_run_slot_rejections', 'validate'),
    step.action('validate', 'validate_{{context.collect}}', [
      { if: 'slots.{{context.collect}} is not null', then: 'END' },
      { else: 'ask_collect' },
    ]),
    step.action('ask_collect', '{{context.utter}}', 'ask_action'),
    step.action('ask_action', '{{context.collect_action}}', 'listen'),
    step.action('listen', 'action_listen', 'start'),
  ]),
  flow('pattern_completed', [step.action('completed', 'utter_can_do_something_else')]),
  flow('pattern_cancel_flow', [
    step.action('cancel', 'action_cancel_flow'),
    step.action('cancelled', 'utter_flow_cancelled_rasa'),
  ]),
  flow('pattern_continue_interrupted', [
    step.action('continue', 'utter_flow_continue_interrupted'),
  ]),
  flow('pattern_internal_error', [step.action('error', 'utter_internal_error_rasa')]),
];

/** Responses of the patterns above (texts as Rasa's defaults). */
export const PATTERN_RESPONSES: JsonObject = {
  utter_can_do_something_else: [{ text: 'What else can I help you with?' }],
  utter_flow_cancelled_rasa: [
    { text: 'Okay, stopping {{ context.canceled_name }}.', metadata: { template: 'jinja' } },
  ],
  utter_flow_continue_interrupted: [
    {
      text: "Let's continue with {{ context.previous_flow_name }}.",
      metadata: { template: 'jinja' },
    },
  ],
  utter_internal_error_rasa: [
    { text: 'Sorry, I am having trouble with that. Please try again in a few minutes.' },
  ],
};

export const PATTERN_ACTION_NAMES = ['action_run_slot_rejections', 'action_cancel_flow'];

/** A clock giving 1, 2, 3, … */
export function counter(): () => number {
  let t = 0;
  return () => ++t;
}

/** Frame ids F1, F2, … */
export function frameIds(): () => string {
  let n = 0;
  return () => `F${++n}`;
}

/** A tracker whose stack holds `frames` (one `stack` event), with slots set first. */
export function trackerWith(
  domain: Domain,
  frames: readonly JsonObject[],
  events: readonly DialogueEvent[] = [],
): DialogueStateTracker {
  const tracker = DialogueStateTracker.fromEvents('spec', events, domain);
  const update = new DialogueStack(frames).patchFrom([]);
  if (update.length > 0) {
    tracker.update(dialogueStackUpdated({ timestamp: 0, update: JSON.stringify(update) }));
  }
  return tracker;
}

/** What one bot turn did: the predicted actions in order and the events logged. */
export interface Turn {
  readonly actions: string[];
  readonly events: DialogueEvent[];
  readonly predictions: FlowPrediction[];
}

/**
 * Runs the flows like the processor would with only FlowPolicy: predict, log the prediction's
 * events and the `action` event, run the action (built-in CALM actions and responses) and log
 * its events — until `action_listen`.
 */
export async function runTurn(
  tracker: DialogueStateTracker,
  flows: FlowsList,
  domain: Domain,
  now: () => number,
  newFrameId: () => string,
): Promise<Turn> {
  const turn: Turn = { actions: [], events: [], predictions: [] };
  for (let i = 0; i < 20; i++) {
    const prediction = advanceFlows({ tracker, flows, domain, now, newFrameId });
    turn.predictions.push(prediction);
    const log = (e: DialogueEvent): void => {
      tracker.update(e);
      turn.events.push(e);
    };
    prediction.events.forEach(log);
    if (prediction.actionName === null) break;
    const name = prediction.actionName;
    turn.actions.push(name);
    const action = actionFor(name, domain);
    const produced = await action.run({
      tracker,
      domain,
      channel: null,
      now,
      endpoint: null,
      actionFor: (n) => actionFor(n, domain),
      actionMetadata: { ...prediction.metadata },
      random: () => 0,
    });
    log(actionExecuted({ name, policy: 'FlowPolicy', confidence: 1, timestamp: now() }));
    produced.forEach(log);
    if (name === 'action_listen') break;
  }
  return turn;
}
