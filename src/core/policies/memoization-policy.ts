import { mlStatesForEvents, stateKey } from 'src/core/dialogue/dialogue-state';
import { type JsonObject } from 'src/core/events/event-base';
import {
  emptyPrediction,
  PRIORITY,
  type Policy,
  type PolicyPrediction,
  type PolicyTrainingData,
  type PredictionInput,
} from 'src/core/policies/policy';
import { examplesOf, lastStates } from 'src/core/policies/training-examples';

/**
 * Rasa's MemoizationPolicy: remembers the action that followed each (last `max_history`)
 * state sequence of the training stories; a key seen with two different actions is forgotten.
 * A hit predicts that action with 1.0.
 */
export class MemoizationPolicy implements Policy {
  /** Scores only (no events, no-user or end-to-end predictions). */
  readonly scoresOnly = true;
  readonly type: string = 'MemoizationPolicy';

  /** Most states of any remembered key: longer histories cannot match (max_history null). */
  protected readonly longestKey: number;

  protected constructor(
    protected readonly lookup: Map<string, string>,
    readonly maxHistory: number | null,
    readonly priority: number,
  ) {
    let longest = 0;
    for (const key of lookup.keys()) {
      longest = Math.max(longest, (JSON.parse(key) as unknown[]).length);
    }
    this.longestKey = longest;
  }

  historyNeeded(): number | null {
    return this.maxHistory ?? this.longestKey;
  }

  static train(data: PolicyTrainingData, params: JsonObject = {}): MemoizationPolicy {
    const maxHistory = readMaxHistory(params);
    return new MemoizationPolicy(
      buildLookup(data, maxHistory),
      maxHistory,
      readPriority(params, PRIORITY.MEMOIZATION),
    );
  }

  static fromJSON(json: JsonObject): MemoizationPolicy {
    return new MemoizationPolicy(
      new Map(Object.entries(json.lookup as Record<string, string>)),
      (json.max_history as number | null) ?? null,
      json.priority as number,
    );
  }

  predict(input: PredictionInput, name: string): PolicyPrediction {
    const action = this.recall(input);
    return this.result(input, name, action);
  }

  protected recall(input: PredictionInput): string | null {
    if (this.maxHistory === null && input.mlStateCount > this.longestKey) return null;
    return this.lookup.get(stateKey(lastStates(input.mlStates, this.maxHistory))) ?? null;
  }

  protected result(input: PredictionInput, name: string, action: string | null): PolicyPrediction {
    const prediction = emptyPrediction(input.actionNames.length, name, this.priority);
    if (action === null) return prediction;
    const i = input.actionNames.indexOf(action);
    if (i < 0) return prediction;
    prediction.probabilities[i] = 1;
    // Set on the fresh prediction rather than spread into a copy (a copy of another shape).
    (prediction as { inTrainingData: boolean }).inTrainingData = true;
    return prediction;
  }

  toJSON(): JsonObject {
    return {
      type: this.type,
      priority: this.priority,
      max_history: this.maxHistory,
      lookup: Object.fromEntries(this.lookup),
    };
  }
}

/**
 * Rasa's AugmentedMemoizationPolicy: on a miss, forgets the oldest turns one at a time (the
 * history from the first, then the second executed action on) and looks up again.
 */
export class AugmentedMemoizationPolicy extends MemoizationPolicy {
  override readonly type: string = 'AugmentedMemoizationPolicy';

  static override train(
    data: PolicyTrainingData,
    params: JsonObject = {},
  ): AugmentedMemoizationPolicy {
    const maxHistory = readMaxHistory(params);
    return new AugmentedMemoizationPolicy(
      buildLookup(data, maxHistory),
      maxHistory,
      readPriority(params, PRIORITY.MEMOIZATION),
    );
  }

  static override fromJSON(json: JsonObject): AugmentedMemoizationPolicy {
    return new AugmentedMemoizationPolicy(
      new Map(Object.entries(json.lookup as Record<string, string>)),
      (json.max_history as number | null) ?? null,
      json.priority as number,
    );
  }

  protected override recall(input: PredictionInput): string | null {
    const direct = super.recall(input);
    if (direct !== null) return direct;
    let events = input.tracker.appliedEvents();
    // Only the last turns can match a remembered key: start from the action that begins them.
    const limit = this.maxHistory ?? this.longestKey;
    const starts = events.map((e, i) => (e.type === 'action' ? i : -1)).filter((i) => i >= 0);
    if (starts.length > limit) events = events.slice(starts[starts.length - limit]);
    let previousKey = stateKey(lastStates(input.mlStates, this.maxHistory));
    for (let again = false; ; again = true) {
      const actions = events.map((e, i) => (e.type === 'action' ? i : -1)).filter((i) => i >= 0);
      const idx = again ? actions[1] : actions[0];
      if (idx === undefined) return null;
      events = events.slice(idx);
      if (events.length === 0) return null;
      const states = mlStatesForEvents(
        input.tracker.senderId,
        events,
        input.domain,
        input.ruleOnly,
      );
      const key = stateKey(lastStates(states, this.maxHistory));
      if (key !== previousKey) {
        const hit = this.lookup.get(key);
        if (hit !== undefined) return hit;
        previousKey = key;
      }
      if (!again) continue;
      if (actions.length < 2) return null;
    }
  }
}

function buildLookup(data: PolicyTrainingData, maxHistory: number | null): Map<string, string> {
  const lookup = new Map<string, string>();
  const contradicting = new Set<string>();
  for (const tracker of data.trackers) {
    // As in Rasa, memoization learns only the stories as written, not augmented ones.
    if (tracker.isAugmented) continue;
    if (tracker.isRule) continue;
    for (const ex of examplesOf(tracker, data.domain)) {
      const key = stateKey(lastStates(ex.states, maxHistory));
      if (contradicting.has(key)) continue;
      const known = lookup.get(key);
      if (known === undefined) lookup.set(key, ex.label);
      else if (known !== ex.label) {
        lookup.delete(key);
        contradicting.add(key);
      }
    }
  }
  return lookup;
}

export function readMaxHistory(params: JsonObject, fallback: number | null = null): number | null {
  const v = params.max_history;
  return typeof v === 'number' && v > 0 ? Math.floor(v) : fallback;
}

export function readPriority(params: JsonObject, fallback: number): number {
  return typeof params.priority === 'number' ? params.priority : fallback;
}
