import {
  NO_RULE_ONLY_DATA,
  trackerStateViews,
  type RuleOnlyData,
} from 'src/core/dialogue/dialogue-state';
import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { FlowPolicy } from 'src/core/flows/flow-policy';
import { FlowsList } from 'src/core/flows/flows-list';
import {
  AugmentedMemoizationPolicy,
  MemoizationPolicy,
} from 'src/core/policies/memoization-policy';
import {
  emptyPrediction,
  type Policy,
  type PolicyPrediction,
  type PolicyTrainingData,
} from 'src/core/policies/policy';
import { findRuleOnlyData, RulePolicy } from 'src/core/policies/rule-policy';
import { TedPolicy } from 'src/core/policies/ted-policy';
import { UnexpecTedIntentPolicy } from 'src/core/policies/unexpected-intent-policy';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { type ComponentConfig } from 'src/core/training-data/config-reader';

/** The policies of Rasa's default config, used when config.yml lists none. */
export const DEFAULT_POLICIES: readonly ComponentConfig[] = [
  { name: 'MemoizationPolicy' },
  { name: 'RulePolicy' },
  { name: 'UnexpecTEDIntentPolicy', max_history: 5, epochs: 100 },
  { name: 'TEDPolicy', max_history: 5, epochs: 100, constrain_similarities: true },
];

type Trainer = {
  train(data: PolicyTrainingData, params: JsonObject): Policy;
  fromJSON(json: JsonObject): Policy;
};

const POLICIES: Readonly<Record<string, Trainer>> = {
  MemoizationPolicy,
  AugmentedMemoizationPolicy,
  RulePolicy,
  TEDPolicy: TedPolicy,
  UnexpecTEDIntentPolicy: UnexpecTedIntentPolicy,
};

/**
 * CALM policies: not trained, built from their config.yml entry (or their `toJSON`) and the
 * assistant's flows, which `train` / `fromJSON` are given (stored apart from the policies).
 */
const FLOW_POLICIES: Readonly<Record<string, (params: JsonObject, flows: FlowsList) => Policy>> = {
  FlowPolicy: (params, flows) => FlowPolicy.fromConfig(params, flows),
};

/** The winning prediction of the ensemble, with the chosen action. */
export interface EnsemblePrediction extends PolicyPrediction {
  readonly actionName: string;
  readonly maxConfidence: number;
}

/**
 * The trained policies in config order, combined as Rasa's DefaultPolicyPredictionEnsemble:
 * rejected actions zeroed, no-user predictions first, then highest (confidence, priority) with
 * the earlier policy winning full ties.
 */
const NO_STATE_VIEWS = {
  states: [],
  count: 0,
  ml: { states: [], count: 0 },
} as const;

export class PolicyEnsemble {
  /** States the policies look at (null: the whole history). */
  private readonly window: number | null;
  /** Rasa's `RuleOnlyDataProvider`: the RulePolicy's rule-only slots and loops. */
  readonly ruleOnly: RuleOnlyData;

  /** `policy_<i>_<type>` per policy, made once (every prediction names its policy). */
  private readonly names: readonly string[];

  /** Config indices in descending priority, config order among equal priorities. */
  private readonly byPriority: readonly number[];

  private constructor(readonly policies: readonly Policy[]) {
    this.names = policies.map((p, i) => `policy_${i}_${p.type}`);
    this.byPriority = policies
      .map((_, i) => i)
      .sort((a, b) => (policies[b] as Policy).priority - (policies[a] as Policy).priority || a - b);
    const needs = policies.map((p) => p.historyNeeded());
    this.window = needs.includes(null) ? null : Math.max(1, ...(needs as number[])) + 1;
    const rules = policies.find((p): p is RulePolicy => p instanceof RulePolicy);
    this.ruleOnly = rules?.ruleOnlyData ?? NO_RULE_ONLY_DATA;
    this.statesNeeded = policies.some((p) => !(p instanceof FlowPolicy));
  }

  /** Whether any policy reads the state history (all but FlowPolicy do). */
  private readonly statesNeeded: boolean;

  /** Trains every configured policy (throws `DIALOGUE.INVALID_RULE` / `CONFIG.INVALID`). */
  static train(
    configs: readonly ComponentConfig[] | null,
    trackers: readonly TrainingTracker[],
    domain: Domain,
    flows: FlowsList = FlowsList.empty(),
  ): PolicyEnsemble {
    const list = configs && configs.length > 0 ? configs : DEFAULT_POLICIES;
    // The RulePolicy's rule-only slots and loops, for the ML policies' training data too.
    const rules = list.find((c) => c.name === 'RulePolicy');
    const ruleOnly =
      rules !== undefined && rules.check_for_contradictions !== false
        ? findRuleOnlyData(
            trackers.filter((t) => t.isRule && !t.isAugmented),
            trackers.filter((t) => !t.isRule && !t.isAugmented),
            domain,
          )
        : NO_RULE_ONLY_DATA;
    const policies = list.map((c) => {
      const { name: _name, ...params } = c;
      const flowPolicy = FLOW_POLICIES[c.name];
      if (flowPolicy) return flowPolicy(params, flows);
      const trainer = POLICIES[c.name];
      if (!trainer) {
        const supported = [...Object.keys(POLICIES), ...Object.keys(FLOW_POLICIES)];
        throw new DialogueError(
          'CONFIG.INVALID',
          `config.yml: unknown policy '${c.name}'; supported: ${supported.join(', ')}`,
        );
      }
      return trainer.train({ trackers, domain, ruleOnly }, params);
    });
    return new PolicyEnsemble(policies);
  }

  /** An ensemble of trained policies, in config order. */
  static of(policies: readonly Policy[]): PolicyEnsemble {
    return new PolicyEnsemble(policies);
  }

  static fromJSON(json: JsonObject, flows: FlowsList = FlowsList.empty()): PolicyEnsemble {
    const list = json.policies as JsonObject[];
    return new PolicyEnsemble(
      list.map((p) => {
        const flowPolicy = FLOW_POLICIES[p.type as string];
        if (flowPolicy) return flowPolicy(p, flows);
        const trainer = POLICIES[p.type as string];
        if (!trainer) {
          throw new DialogueError(
            'MODEL.INVALID_ARCHIVE',
            `unknown policy '${String(p.type)}' in the model`,
          );
        }
        return trainer.fromJSON(p);
      }),
    );
  }

  toJSON(): JsonObject {
    return { policies: this.policies.map((p) => p.toJSON()) };
  }

  /** The policy names as predictions report them (`policy_0_MemoizationPolicy`, …). */
  policyName(i: number): string {
    return this.names[i] ?? `policy_${i}_unknown`;
  }

  /**
   * Rasa's ensemble choice: no-user predictions compete first, then end-to-end ones, else all;
   * the highest confidence wins, ties go to the higher priority, then to the earlier policy in
   * the config. The events of every prediction apply, the optional ones of the winner only.
   *
   * Policies are asked in descending priority (config order among equals), and a scores-only
   * policy (`Policy.scoresOnly`) is not asked once it cannot win: when a prediction asked before
   * it is a no-user or end-to-end one, or has confidence 1 (it can at best tie, and ties go to
   * the prediction asked first). The choice and the events are those of asking every policy;
   * a turn whose story the memoization knows then skips TED's network.
   */
  predict(tracker: DialogueStateTracker, domain: Domain, now?: () => number): EnsemblePrediction {
    const actionNames = domain.actionNamesOrTexts;
    // FlowPolicy reads the stack and slots only: an ensemble of it alone needs no state history.
    const views = this.statesNeeded
      ? trackerStateViews(tracker, domain, this.ruleOnly, this.window)
      : NO_STATE_VIEWS;
    const input = {
      tracker,
      domain,
      states: views.states,
      stateCount: views.count,
      mlStates: views.ml.states,
      mlStateCount: views.ml.count,
      ruleOnly: this.ruleOnly,
      actionNames,
      ...(now === undefined ? {} : { now }),
    };
    const rejected = lastRejectedAction(tracker.events);
    const r = rejected === null ? -1 : actionNames.indexOf(rejected);
    // By config index; undefined for the policies not asked.
    const predictions = new Array<PolicyPrediction | undefined>(this.policies.length);
    let noUser = false;
    let e2e = false;
    let certain = false;
    for (let j = 0; j < this.byPriority.length; j++) {
      const i = this.byPriority[j] as number;
      const policy = this.policies[i] as Policy;
      if (policy.scoresOnly && (noUser || e2e || certain)) continue;
      let p = policy.predict(input, this.names[i] as string);
      if (r >= 0) {
        const probabilities = [...p.probabilities];
        probabilities[r] = 0;
        p = { ...p, probabilities };
      }
      predictions[i] = p;
      if (p.isNoUserPrediction) noUser = true;
      if (p.isEndToEndPrediction) e2e = true;
      if (maxOf(p.probabilities) >= 1) certain = true;
    }
    let best: PolicyPrediction | null = null;
    let bestConfidence = -1;
    for (let k = 0; k < predictions.length; k++) {
      const p = predictions[k];
      if (p === undefined) continue;
      if (noUser ? !p.isNoUserPrediction : e2e && !p.isEndToEndPrediction) continue;
      const conf = maxOf(p.probabilities);
      if (
        best === null ||
        conf > bestConfidence ||
        (conf === bestConfidence && p.priority > best.priority)
      ) {
        best = p;
        bestConfidence = conf;
      }
    }
    const winner = best ?? emptyPrediction(actionNames.length, 'none', 0);
    const events: DialogueEvent[] = [];
    for (const p of predictions) {
      if (p === undefined) continue;
      for (let i = 0; i < p.events.length; i++) events.push(p.events[i] as DialogueEvent);
    }
    for (let i = 0; i < winner.optionalEvents.length; i++) {
      events.push(winner.optionalEvents[i] as DialogueEvent);
    }
    let index = 0;
    for (let i = 1; i < winner.probabilities.length; i++) {
      if ((winner.probabilities[i] as number) > (winner.probabilities[index] as number)) index = i;
    }
    return {
      probabilities: winner.probabilities,
      policyName: winner.policyName,
      priority: winner.priority,
      events,
      optionalEvents: winner.optionalEvents,
      isEndToEndPrediction: winner.isEndToEndPrediction,
      isNoUserPrediction: winner.isNoUserPrediction,
      hideRuleTurn: winner.hideRuleTurn,
      inTrainingData: winner.inTrainingData,
      actionMetadata: winner.actionMetadata ?? null,
      actionName: actionNames[index] as string,
      maxConfidence: (winner.probabilities[index] as number) ?? 0,
    };
  }
}

/** The action of the latest `action_execution_rejected` after the latest executed action. */
function maxOf(values: readonly number[]): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    if (x > max) max = x;
  }
  return max;
}

function lastRejectedAction(events: readonly DialogueEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type === 'action_execution_rejected') return e.name;
    if (e.type === 'action' || e.type === 'user') return null;
  }
  return null;
}
