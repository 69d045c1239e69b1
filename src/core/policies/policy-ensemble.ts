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
export class PolicyEnsemble {
  /** States the policies look at (null: the whole history). */
  private readonly window: number | null;
  /** Rasa's `RuleOnlyDataProvider`: the RulePolicy's rule-only slots and loops. */
  readonly ruleOnly: RuleOnlyData;

  private constructor(readonly policies: readonly Policy[]) {
    const needs = policies.map((p) => p.historyNeeded());
    this.window = needs.includes(null) ? null : Math.max(1, ...(needs as number[])) + 1;
    const rules = policies.find((p): p is RulePolicy => p instanceof RulePolicy);
    this.ruleOnly = rules?.ruleOnlyData ?? NO_RULE_ONLY_DATA;
  }

  /** Trains every configured policy (throws `DIALOGUE.INVALID_RULE` / `CONFIG.INVALID`). */
  static train(
    configs: readonly ComponentConfig[] | null,
    trackers: readonly TrainingTracker[],
    domain: Domain,
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
      const trainer = POLICIES[c.name];
      if (!trainer) {
        throw new DialogueError(
          'CONFIG.INVALID',
          `config.yml: unknown policy '${c.name}'; supported: ${Object.keys(POLICIES).join(', ')}`,
        );
      }
      const { name: _name, ...params } = c;
      return trainer.train({ trackers, domain, ruleOnly }, params);
    });
    return new PolicyEnsemble(policies);
  }

  static fromJSON(json: JsonObject): PolicyEnsemble {
    const list = json.policies as JsonObject[];
    return new PolicyEnsemble(
      list.map((p) => {
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
    return `policy_${i}_${this.policies[i]?.type ?? 'unknown'}`;
  }

  predict(tracker: DialogueStateTracker, domain: Domain): EnsemblePrediction {
    const actionNames = domain.actionNamesOrTexts;
    const views = trackerStateViews(tracker, domain, this.ruleOnly, this.window);
    const input = {
      tracker,
      domain,
      states: views.states,
      stateCount: views.count,
      mlStates: views.ml.states,
      mlStateCount: views.ml.count,
      ruleOnly: this.ruleOnly,
      actionNames,
    };
    let predictions = this.policies.map((p, i) => p.predict(input, this.policyName(i)));
    const rejected = lastRejectedAction(tracker.events);
    if (rejected !== null) {
      const r = actionNames.indexOf(rejected);
      if (r >= 0) {
        predictions = predictions.map((p) => {
          const probabilities = [...p.probabilities];
          probabilities[r] = 0;
          return { ...p, probabilities };
        });
      }
    }
    // No-user predictions compete first, then end-to-end ones, else all (no arrays made).
    let noUser = false;
    let e2e = false;
    for (let i = 0; i < predictions.length; i++) {
      const p = predictions[i] as PolicyPrediction;
      if (p.isNoUserPrediction) noUser = true;
      if (p.isEndToEndPrediction) e2e = true;
    }
    let best: PolicyPrediction | null = null;
    let bestConfidence = -1;
    for (let k = 0; k < predictions.length; k++) {
      const p = predictions[k] as PolicyPrediction;
      if (noUser ? !p.isNoUserPrediction : e2e && !p.isEndToEndPrediction) continue;
      let conf = 0;
      const probabilities = p.probabilities;
      for (let i = 0; i < probabilities.length; i++) {
        const x = probabilities[i] as number;
        if (x > conf) conf = x;
      }
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
      ...winner,
      events,
      actionName: actionNames[index] as string,
      maxConfidence: (winner.probabilities[index] as number) ?? 0,
    };
  }
}

/** The action of the latest `action_execution_rejected` after the latest executed action. */
function lastRejectedAction(events: readonly DialogueEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type === 'action_execution_rejected') return e.name;
    if (e.type === 'action' || e.type === 'user') return null;
  }
  return null;
}
