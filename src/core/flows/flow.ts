import { type JsonObject } from 'src/core/events/event-base';

/**
 * The flow model of Rasa Pro's CALM (flows.yml), as the reader builds it: ids resolved (default
 * ids filled in), implicit `next` links made explicit, nested branch steps kept in place. Every
 * later stage (validation, serialisation, the stack, the command processor, the executor)
 * reads this model only.
 */

/** Synthetic step ids: the start and end of a flow, and `NEXT:<id>` continuations. */
export const START_STEP = 'START';
export const END_STEP = 'END';
export const CONTINUE_STEP_PREFIX = 'NEXT:';

/** A flow's `nlu_trigger` item, always in the long form. */
export interface NluTrigger {
  readonly intent: string;
  /** Default 0.0. */
  readonly confidenceThreshold: number;
}

/** A collect step's rejection: when `if` holds for the new value, `utter` is said. */
export interface SlotRejection {
  readonly if: string;
  readonly utter: string;
}

/** One `{if, then}` branch of a `next` list; `then` is a step id or nested steps. */
export interface ConditionalBranch {
  readonly if: string;
  readonly then: string | readonly FlowStep[];
}

/** The `{else}` branch ending a `next` list. */
export interface ElseBranch {
  readonly else: string | readonly FlowStep[];
}

/**
 * Where a step goes next: a step id (incl. `END`), or branches. After reading, every step that
 * is not a `link` has one (the implicit "following sibling" / `END` made explicit).
 */
export type StepNext = string | readonly (ConditionalBranch | ElseBranch)[];

interface StepBase {
  /** The resolved id (given, or the default `{flow_id}_{idx}_{postfix}`). */
  readonly id: string;
  /** Whether the id was given in the YAML (serialisation keeps ids either way). */
  readonly idGiven: boolean;
  readonly next: StepNext | null;
  readonly description: string | null;
  readonly metadata: JsonObject | null;
}

export interface ActionStep extends StepBase {
  readonly kind: 'action';
  /** The action name; may hold `{{context.x}}` (rendered when the step runs). */
  readonly action: string;
}

export interface CollectStep extends StepBase {
  readonly kind: 'collect';
  readonly collect: string;
  /** Default `utter_ask_<slot>`. */
  readonly utter: string;
  /** Always `action_ask_<slot>`. */
  readonly collectAction: string;
  readonly askBeforeFilling: boolean;
  readonly resetAfterFlowEnds: boolean;
  readonly rejections: readonly SlotRejection[];
}

export interface SetSlotsStep extends StepBase {
  readonly kind: 'set_slots';
  /** In order, values verbatim. */
  readonly slots: readonly { readonly name: string; readonly value: unknown }[];
}

export interface LinkStep extends StepBase {
  readonly kind: 'link';
  readonly link: string;
}

export interface CallStep extends StepBase {
  readonly kind: 'call';
  readonly call: string;
}

export interface NoopStep extends StepBase {
  readonly kind: 'noop';
}

export type FlowStep = ActionStep | CollectStep | SetSlotsStep | LinkStep | CallStep | NoopStep;

export interface Flow {
  readonly id: string;
  /** Given, or the id with `_`/`-` turned into spaces. */
  readonly name: string;
  readonly description: string;
  /** The flow guard (`if`), as a predicate string; null: none. `false` (link-only) is "false". */
  readonly guard: string | null;
  readonly nluTrigger: readonly NluTrigger[];
  readonly alwaysIncludeInPrompt: boolean | null;
  readonly persistedSlots: readonly string[];
  readonly runPatternCompleted: boolean;
  /** The top-level steps, in order (branches nest further steps). */
  readonly steps: readonly FlowStep[];
  /** The file the flow was read from (null: a built-in pattern or the train route's body). */
  readonly filePath: string | null;
  /** Whether this is one of Parley's built-in default patterns (not overridden by the user). */
  readonly builtIn: boolean;
}

/** Pattern flows have ids starting with this. */
export const PATTERN_PREFIX = 'pattern_';

export function isPatternFlow(flowId: string): boolean {
  return flowId.startsWith(PATTERN_PREFIX);
}

/**
 * Added after the model: whether the flow's `name` was given in the YAML (Rasa serialises
 * `name` only then). Absent: treated as given.
 */
export interface Flow {
  readonly nameGiven?: boolean;
}
