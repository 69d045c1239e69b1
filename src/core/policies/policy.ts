import { type DialogueState, type RuleOnlyData } from 'src/core/dialogue/dialogue-state';
import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/** What one policy says about the next action (Rasa `PolicyPrediction`). */
export interface PolicyPrediction {
  /** One probability per `domain.actionNamesOrTexts`, same order. */
  readonly probabilities: number[];
  readonly policyName: string;
  readonly priority: number;
  /** Events applied whichever policy wins. */
  readonly events: DialogueEvent[];
  /** Events applied only when this policy wins. */
  readonly optionalEvents: DialogueEvent[];
  readonly isEndToEndPrediction: boolean;
  readonly isNoUserPrediction: boolean;
  readonly hideRuleTurn: boolean;
  /** Whether the prediction comes from data seen in training (memoization, rules). */
  readonly inTrainingData: boolean;
  /**
   * Rasa's `action_metadata`: metadata of the predicted action's `action` event and of the `bot`
   * events it utters (FlowPolicy: `active_flow`, `step_id`). Absent or null: none.
   */
  readonly actionMetadata?: JsonObject | null;
}

/** What a policy gets to predict from. */
export interface PredictionInput {
  readonly tracker: DialogueStateTracker;
  readonly domain: Domain;
  /**
   * The last states of the tracker's history (see `trackerStates`), computed once per
   * prediction: at least `historyNeeded()` of every policy (all when one needs all).
   */
  readonly states: readonly DialogueState[];
  /** How many states the whole history has (`states` may hold only the last ones). */
  readonly stateCount: number;
  /**
   * The same window of the history as the ML policies (memoization, TED) see it: without the
   * turns of rules that no story contains and without rule-only slots and loops (Rasa's
   * `ignore_rule_only_turns` with `rule_only_data`; see `MlStates`).
   */
  readonly mlStates: readonly DialogueState[];
  /** How many states the whole ML history has. */
  readonly mlStateCount: number;
  /** What the RulePolicy learned only from rules (empty without a RulePolicy). */
  readonly ruleOnly: RuleOnlyData;
  readonly actionNames: readonly string[];
  /**
   * The turn's clock, for the events a policy predicts (FlowPolicy's stack and flow events), so
   * they keep the order of the turn's other events; absent: the wall clock.
   */
  readonly now?: () => number;
}

/** A trained dialogue policy. */
export interface Policy {
  /** Class name as in config.yml (`MemoizationPolicy`, …). */
  readonly type: string;
  readonly priority: number;
  /**
   * Whether every prediction is scores only: no events, never a no-user or end-to-end
   * prediction. The ensemble skips such a policy when it cannot win (see PolicyEnsemble).
   */
  readonly scoresOnly: boolean;
  predict(input: PredictionInput, name: string): PolicyPrediction;
  /** How many of the last states the policy looks at (null: all of them). */
  historyNeeded(): number | null;
  toJSON(): JsonObject;
}

/** Training data handed to every policy. */
export interface PolicyTrainingData {
  readonly trackers: readonly TrainingTracker[];
  readonly domain: Domain;
  /** The rule-only slots and loops the ensemble's RulePolicy finds (none when absent). */
  readonly ruleOnly?: RuleOnlyData;
}

/** Rasa's policy priorities. */
export const PRIORITY = {
  DEFAULT: 1,
  UNLIKELY_INTENT: 2,
  MEMOIZATION: 3,
  RULE: 4,
} as const;

export function emptyPrediction(
  size: number,
  policyName: string,
  priority: number,
  overrides?: Partial<PolicyPrediction>,
): PolicyPrediction {
  const prediction: PolicyPrediction = {
    probabilities: new Array<number>(size).fill(0),
    policyName,
    priority,
    events: [],
    optionalEvents: [],
    isEndToEndPrediction: false,
    isNoUserPrediction: false,
    hideRuleTurn: false,
    inTrainingData: false,
  };
  // Every policy makes one per prediction: no spread (and copy) when there is nothing to add.
  return overrides === undefined ? prediction : { ...prediction, ...overrides };
}

/** One (states, label) example per executed action of a training conversation. */
export interface StatesAndLabel {
  readonly states: DialogueState[];
  readonly label: string;
}
