import {
  isPrevActionListen,
  NO_RULE_ONLY_DATA,
  withoutRuleOnly,
  type DialogueState,
} from 'src/core/dialogue/dialogue-state';
import { type JsonObject } from 'src/core/events/event-base';
import { readMaxHistory, readPriority } from 'src/core/policies/memoization-policy';
import {
  emptyPrediction,
  PRIORITY,
  type Policy,
  type PolicyPrediction,
  type PolicyTrainingData,
  type PredictionInput,
  type StatesAndLabel,
} from 'src/core/policies/policy';
import { examplesOf, lastStates } from 'src/core/policies/training-examples';
import { RULE_SNIPPET_ACTION_NAME } from 'src/core/training-data/stories-yaml-reader';

const DEFAULT_MAX_HISTORY = 5;
const DEFAULT_ITERATIONS = 300;

/**
 * Parley's stand-in for Rasa's TEDPolicy (registered under that name): a softmax regression
 * over the featurised last `max_history` dialogue states (intent, entities and user text only
 * for turns right after `action_listen`, previous action, slot features, active loop — each
 * tagged with its position from the end). Trained full-batch with Adam on the stories (and
 * the rules' steps after `...`); predicting is a sparse dot product, tens of microseconds.
 */
export class TedPolicy implements Policy {
  readonly type = 'TEDPolicy';
  /** Scores only (no events, no-user or end-to-end predictions). */
  readonly scoresOnly = true;

  private constructor(
    private readonly features: Map<string, number>,
    private readonly labels: string[],
    /** features × labels, feature-major. */
    private readonly weights: Float32Array,
    private readonly bias: Float32Array,
    readonly maxHistory: number,
    readonly priority: number,
  ) {}

  static train(data: PolicyTrainingData, params: JsonObject = {}): TedPolicy {
    const maxHistory = readMaxHistory(params, DEFAULT_MAX_HISTORY) ?? DEFAULT_MAX_HISTORY;
    const priority = readPriority(params, PRIORITY.DEFAULT);
    const examples: StatesAndLabel[] = [];
    const ruleOnly = data.ruleOnly ?? NO_RULE_ONLY_DATA;
    for (const t of data.trackers) {
      for (const ex of examplesOf(t, data.domain)) {
        if (ex.label === RULE_SNIPPET_ACTION_NAME) continue;
        if (t.isRule) {
          const cut = ex.states.findLastIndex(
            (s) => s.prev_action?.action_name === RULE_SNIPPET_ACTION_NAME,
          );
          if (cut >= 0 && cut === ex.states.length - 1) continue;
          // Rules alone may mention some slots and loops; TED never sees them when predicting.
          const states = ex.states.slice(cut + 1).map((st) => withoutRuleOnly(st, ruleOnly));
          examples.push({ states, label: ex.label });
        } else examples.push(ex);
      }
    }
    const features = new Map<string, number>();
    const labels: string[] = [];
    const labelIndex = new Map<string, number>();
    // Rasa's MaxHistoryTrackerFeaturizer removes duplicate (states, label) examples; augmented
    // trackers repeat many windows of the stories they are made of.
    const unique = new Set<string>();
    const rows: { idx: number[]; y: number }[] = [];
    for (const ex of examples) {
      const window = featuresOf(lastStates(ex.states, maxHistory));
      const key = `${JSON.stringify(window)}\u0000${ex.label}`;
      if (unique.has(key)) continue;
      unique.add(key);
      const idx: number[] = [];
      for (const f of window) {
        let i = features.get(f);
        if (i === undefined) {
          i = features.size;
          features.set(f, i);
        }
        idx.push(i);
      }
      let y = labelIndex.get(ex.label);
      if (y === undefined) {
        y = labels.length;
        labels.push(ex.label);
        labelIndex.set(ex.label, y);
      }
      rows.push({ idx, y });
    }
    const F = features.size;
    const C = Math.max(1, labels.length);
    const weights = new Float32Array(F * C);
    const bias = new Float32Array(C);
    const iterations =
      typeof params.epochs === 'number' && params.epochs > DEFAULT_ITERATIONS
        ? Math.floor(params.epochs)
        : DEFAULT_ITERATIONS;
    if (rows.length > 0) fit(rows, weights, bias, F, C, iterations);
    return new TedPolicy(features, labels, weights, bias, maxHistory, priority);
  }

  static fromJSON(json: JsonObject): TedPolicy {
    const features = new Map<string, number>(
      (json.features as string[]).map((f, i): [string, number] => [f, i]),
    );
    return new TedPolicy(
      features,
      json.labels as string[],
      Float32Array.from(json.weights as number[]),
      Float32Array.from(json.bias as number[]),
      json.max_history as number,
      json.priority as number,
    );
  }

  historyNeeded(): number {
    return this.maxHistory;
  }

  toJSON(): JsonObject {
    return {
      type: this.type,
      priority: this.priority,
      max_history: this.maxHistory,
      features: [...this.features.keys()],
      labels: this.labels,
      weights: Array.from(this.weights, (w) => Math.round(w * 1e5) / 1e5),
      bias: Array.from(this.bias, (w) => Math.round(w * 1e5) / 1e5),
    };
  }

  /** Per action-name list, the action index of each label (-1 when absent). */
  private readonly labelSlots = new WeakMap<readonly string[], Int32Array>();
  /** The feature index by position from the end, then by untagged feature. */
  private positions: Map<string, number>[] | null = null;

  predict(input: PredictionInput, name: string): PolicyPrediction {
    const prediction = emptyPrediction(input.actionNames.length, name, this.priority);
    const C = this.labels.length;
    if (C === 0) return prediction;
    const scores = Float64Array.from(this.bias);
    const states = input.mlStates;
    const n = Math.min(states.length, this.maxHistory);
    const positions = this.featuresByPosition();
    for (let k = 0; k < n; k++) {
      const known = positions[n - 1 - k];
      if (known === undefined) continue;
      for (const f of stateFeatures(states[states.length - n + k] as DialogueState, '')) {
        const i = known.get(f);
        if (i === undefined) continue;
        const base = i * C;
        for (let c = 0; c < C; c++) {
          scores[c] = (scores[c] as number) + (this.weights[base + c] as number);
        }
      }
    }
    const probs = softmax(scores);
    const slots = this.labelSlotsFor(input.actionNames);
    for (let c = 0; c < C; c++) {
      const a = slots[c] as number;
      if (a >= 0) prediction.probabilities[a] = probs[c] as number;
    }
    return prediction;
  }

  private featuresByPosition(): Map<string, number>[] {
    if (this.positions === null) {
      const positions: Map<string, number>[] = [];
      for (const [feature, i] of this.features) {
        const bar = feature.indexOf('|');
        const k = Number(feature.slice(0, bar));
        (positions[k] ??= new Map()).set(feature.slice(bar + 1), i);
      }
      this.positions = positions;
    }
    return this.positions;
  }

  private labelSlotsFor(actionNames: readonly string[]): Int32Array {
    let slots = this.labelSlots.get(actionNames);
    if (slots === undefined) {
      slots = Int32Array.from(this.labels, (l) => actionNames.indexOf(l));
      this.labelSlots.set(actionNames, slots);
    }
    return slots;
  }
}

/** Position-tagged string features of the last states. */
export function featuresOf(states: readonly DialogueState[]): string[] {
  const n = states.length;
  return states.flatMap((s, k) => stateFeatures(s, `${n - 1 - k}|`));
}

/** The features of one state, each prefixed with its position tag `p`. */
function stateFeatures(s: DialogueState, p: string): string[] {
  const out: string[] = [];
  if (s.prev_action?.action_name) out.push(`${p}a:${s.prev_action.action_name}`);
  else if (s.prev_action?.action_text) out.push(`${p}at:${s.prev_action.action_text}`);
  else out.push(`${p}start`);
  if (s.user && isPrevActionListen(s)) {
    if (s.user.intent) out.push(`${p}i:${s.user.intent}`);
    else if (s.user.text) out.push(`${p}t:${s.user.text}`);
    for (const e of s.user.entities ?? []) out.push(`${p}e:${e}`);
  }
  for (const [slot, value] of Object.entries(s.slots ?? {})) {
    if (typeof value === 'string') out.push(`${p}s:${slot}:${value}`);
    else value.forEach((v, j) => v !== 0 && out.push(`${p}s:${slot}:${j}`));
  }
  if (s.active_loop) out.push(`${p}l:${s.active_loop.name}`);
  return out;
}

function softmax(scores: Float64Array): Float64Array {
  let max = -Infinity;
  for (const s of scores) if (s > max) max = s;
  let sum = 0;
  const out = new Float64Array(scores.length);
  for (let i = 0; i < scores.length; i++) {
    out[i] = Math.exp((scores[i] as number) - max);
    sum += out[i] as number;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / sum;
  return out;
}

/** Full-batch Adam on the softmax cross-entropy with a little L2. */
function fit(
  rows: { idx: number[]; y: number }[],
  w: Float32Array,
  b: Float32Array,
  F: number,
  C: number,
  iterations: number,
): void {
  const lr = 0.1;
  const l2 = 1e-4;
  const gw = new Float64Array(F * C);
  const gb = new Float64Array(C);
  const mw = new Float64Array(F * C);
  const vw = new Float64Array(F * C);
  const mb = new Float64Array(C);
  const vb = new Float64Array(C);
  const b1 = 0.9;
  const b2 = 0.999;
  const scores = new Float64Array(C);
  for (let it = 1; it <= iterations; it++) {
    gw.fill(0);
    gb.fill(0);
    for (const row of rows) {
      for (let c = 0; c < C; c++) scores[c] = b[c] as number;
      for (const i of row.idx) {
        const base = i * C;
        for (let c = 0; c < C; c++) scores[c] = (scores[c] as number) + (w[base + c] as number);
      }
      const p = softmax(scores);
      p[row.y] = (p[row.y] as number) - 1;
      for (let c = 0; c < C; c++) gb[c] = (gb[c] as number) + (p[c] as number);
      for (const i of row.idx) {
        const base = i * C;
        for (let c = 0; c < C; c++) gw[base + c] = (gw[base + c] as number) + (p[c] as number);
      }
    }
    const n = rows.length;
    const c1 = 1 - b1 ** it;
    const c2 = 1 - b2 ** it;
    for (let j = 0; j < w.length; j++) {
      const g = (gw[j] as number) / n + l2 * (w[j] as number);
      mw[j] = b1 * (mw[j] as number) + (1 - b1) * g;
      vw[j] = b2 * (vw[j] as number) + (1 - b2) * g * g;
      w[j] =
        (w[j] as number) -
        (lr * ((mw[j] as number) / c1)) / (Math.sqrt((vw[j] as number) / c2) + 1e-8);
    }
    for (let c = 0; c < C; c++) {
      const g = (gb[c] as number) / n;
      mb[c] = b1 * (mb[c] as number) + (1 - b1) * g;
      vb[c] = b2 * (vb[c] as number) + (1 - b2) * g * g;
      b[c] =
        (b[c] as number) -
        (lr * ((mb[c] as number) / c1)) / (Math.sqrt((vb[c] as number) / c2) + 1e-8);
    }
  }
}
