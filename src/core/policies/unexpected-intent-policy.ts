import { type JsonObject } from 'src/core/events/event-base';
import { readPriority } from 'src/core/policies/memoization-policy';
import {
  emptyPrediction,
  PRIORITY,
  type Policy,
  type PolicyPrediction,
  type PredictionInput,
} from 'src/core/policies/policy';

/**
 * Rasa's UnexpecTEDIntentPolicy as a documented no-op: it never predicts
 * `action_unlikely_intent` (all scores 0), so it never changes the ensemble's choice.
 */
export class UnexpecTedIntentPolicy implements Policy {
  readonly type = 'UnexpecTEDIntentPolicy';
  /** Scores only (no events, no-user or end-to-end predictions). */
  readonly scoresOnly = true;

  private constructor(readonly priority: number) {}

  static train(_data: unknown, params: JsonObject = {}): UnexpecTedIntentPolicy {
    return new UnexpecTedIntentPolicy(readPriority(params, PRIORITY.UNLIKELY_INTENT));
  }

  static fromJSON(json: JsonObject): UnexpecTedIntentPolicy {
    return new UnexpecTedIntentPolicy(json.priority as number);
  }

  predict(input: PredictionInput, name: string): PolicyPrediction {
    return emptyPrediction(input.actionNames.length, name, this.priority);
  }

  historyNeeded(): number {
    return 1;
  }

  toJSON(): JsonObject {
    return { type: this.type, priority: this.priority };
  }
}
