import {
  isPrevActionListen,
  NO_RULE_ONLY_DATA,
  slotFeatures,
  stateKey,
  statesForEvents,
  trackerStates,
  type DialogueState,
  type RuleOnlyData,
} from 'src/core/dialogue/dialogue-state';
import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import {
  ACTION_BACK_NAME,
  ACTION_DEFAULT_FALLBACK_NAME,
  ACTION_LISTEN_NAME,
  ACTION_RESTART_NAME,
  ACTION_SESSION_START_NAME,
} from 'src/core/domain/domain-constants';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { loopInterrupted } from 'src/core/events/loop-interrupted';
import { readPriority } from 'src/core/policies/memoization-policy';
import {
  emptyPrediction,
  PRIORITY,
  type Policy,
  type PolicyPrediction,
  type PolicyTrainingData,
  type PredictionInput,
} from 'src/core/policies/policy';
import { examplesOf } from 'src/core/policies/training-examples';
import { appliedEvents } from 'src/core/tracker/applied-events';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import {
  RULE_SNIPPET_ACTION_NAME,
  SHOULD_NOT_BE_SET,
} from 'src/core/training-data/stories-yaml-reader';

const DO_NOT_PREDICT_LOOP_ACTION = 'do_not_predict_loop_action';
const LOOP_WAS_INTERRUPTED = 'loop_was_interrupted';

const DEFAULT_INTENT_ACTIONS: Readonly<Record<string, string>> = {
  restart: ACTION_RESTART_NAME,
  back: ACTION_BACK_NAME,
  session_start: ACTION_SESSION_START_NAME,
};

interface Rule {
  readonly states: DialogueState[];
  readonly key: string;
  readonly action: string;
  readonly sources: string[];
}

interface RuleConfig {
  readonly priority: number;
  readonly coreFallbackThreshold: number;
  readonly coreFallbackActionName: string;
  readonly enableFallbackPrediction: boolean;
  readonly restrictRules: boolean;
  readonly checkForContradictions: boolean;
}

interface InternalPrediction {
  readonly action: string | null;
  /** The rules that predicted the action, by name (for messages). */
  readonly source: string | null;
  /**
   * What predicted the action, as Rasa names its prediction sources: a rule's state key,
   * `predicting default action with intent <intent>`, or
   * `handling active loops and forms - <loop>[ - action_listen]`.
   */
  readonly origin: string | null;
  readonly events: DialogueEvent[];
  readonly noUser: boolean;
}

const DEFAULT_RULES = 'predicting default action with intent ';
const LOOP_RULES = 'handling active loops and forms - ';
const LOOP_RULES_SEPARATOR = ' - ';

/** What the rules learned beyond their lookup (Rasa's `rule_only_*` and `rules_not_in_stories`). */
interface RuleAnalysis {
  readonly ruleOnly: RuleOnlyData;
  /** Prediction origins that never predict a story's action: their turns are hidden from ML. */
  readonly notInStories: ReadonlySet<string>;
}

const NO_ANALYSIS: RuleAnalysis = { ruleOnly: NO_RULE_ONLY_DATA, notInStories: new Set() };

/**
 * Rasa's RulePolicy: exact rules (learned from `rules:`) that match the end of the
 * conversation, the happy path of an active loop, default intents (`/restart`, `/back`,
 * `/session_start`) and the loop unhappy-path conditions learned from rules and stories. When
 * nothing applies it predicts the core fallback action with `core_fallback_threshold`.
 */
export class RulePolicy implements Policy {
  readonly type = 'RulePolicy';
  /** Predicts events and no-user predictions (loops, default actions): always consulted. */
  readonly scoresOnly = false;

  private constructor(
    private readonly rules: Rule[],
    private readonly unhappy: { states: DialogueState[]; value: string }[],
    private readonly config: RuleConfig,
    private analysis: RuleAnalysis = NO_ANALYSIS,
  ) {}

  /** Slots and loops that only rules mention (empty without `check_for_contradictions`). */
  get ruleOnlyData(): RuleOnlyData {
    return this.analysis.ruleOnly;
  }

  get priority(): number {
    return this.config.priority;
  }

  historyNeeded(): number {
    return Math.max(
      1,
      ...this.rules.map((r) => r.states.length),
      ...this.unhappy.map((u) => u.states.length),
    );
  }

  static train(data: PolicyTrainingData, params: JsonObject = {}): RulePolicy {
    const config: RuleConfig = {
      priority: readPriority(params, PRIORITY.RULE),
      coreFallbackThreshold:
        typeof params.core_fallback_threshold === 'number' ? params.core_fallback_threshold : 0.3,
      coreFallbackActionName:
        typeof params.core_fallback_action_name === 'string'
          ? params.core_fallback_action_name
          : ACTION_DEFAULT_FALLBACK_NAME,
      enableFallbackPrediction: params.enable_fallback_prediction !== false,
      restrictRules: params.restrict_rules !== false,
      checkForContradictions: params.check_for_contradictions !== false,
    };
    // As in Rasa, augmented story trackers are not rule data.
    const trackers = data.trackers.filter((t) => !t.isAugmented);
    const ruleTrackers = trackers.filter((t) => t.isRule);
    if (config.restrictRules) checkRestrictedRules(ruleTrackers);
    if (config.checkForContradictions) checkIncompleteRules(ruleTrackers, data.domain);
    const rules = buildRules(ruleTrackers, data.domain);
    const unhappy = buildUnhappy(trackers, data.domain);
    const policy = new RulePolicy(rules, unhappy, config);
    if (config.checkForContradictions) {
      const storyTrackers = trackers.filter((t) => !t.isRule);
      // As Rasa: the origins that fire in rules, plus every default-intent and loop origin,
      // minus those that predict a story's own action, are hidden from the ML policies.
      const fired = policy.checkContradictions(ruleTrackers, data.domain);
      const used = policy.checkContradictions(storyTrackers, data.domain);
      const all = new Set([...fired, ...defaultOrigins(), ...loopOrigins(data.domain)]);
      policy.analysis = {
        // The ensemble works it out once for all its policies.
        ruleOnly: data.ruleOnly ?? findRuleOnlyData(ruleTrackers, storyTrackers, data.domain),
        notInStories: new Set([...all].filter((o) => !used.has(o)).sort()),
      };
    }
    return policy;
  }

  static fromJSON(json: JsonObject): RulePolicy {
    const rules = (
      json.rules as { states: DialogueState[]; action: string; sources: string[] }[]
    ).map((r) => ({ ...r, key: stateKey(r.states) }));
    const strings = (v: unknown): string[] =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    // Models trained before rule-only data was kept have none: nothing is hidden.
    return new RulePolicy(
      rules,
      json.unhappy as { states: DialogueState[]; value: string }[],
      json.config as RuleConfig,
      {
        ruleOnly: { slots: strings(json.rule_only_slots), loops: strings(json.rule_only_loops) },
        notInStories: new Set(strings(json.rules_not_in_stories)),
      },
    );
  }

  toJSON(): JsonObject {
    return {
      type: this.type,
      priority: this.priority,
      config: this.config,
      rules: this.rules.map((r) => ({ states: r.states, action: r.action, sources: r.sources })),
      unhappy: this.unhappy,
      rule_only_slots: [...this.analysis.ruleOnly.slots],
      rule_only_loops: [...this.analysis.ruleOnly.loops],
      rules_not_in_stories: [...this.analysis.notInStories],
    };
  }

  predict(input: PredictionInput, name: string): PolicyPrediction {
    const found = this.internalPredict(input.tracker, input.states);
    const size = input.actionNames.length;
    if (found.action !== null) {
      const i = input.actionNames.indexOf(found.action);
      const prediction = emptyPrediction(size, name, this.priority, {
        events: found.events,
        isNoUserPrediction: found.noUser,
        hideRuleTurn: found.origin !== null && this.analysis.notInStories.has(found.origin),
        inTrainingData: true,
      });
      if (i >= 0) {
        prediction.probabilities[i] = 1;
        return prediction;
      }
    }
    const fallback = emptyPrediction(size, name, this.priority);
    if (this.config.enableFallbackPrediction) {
      const i = input.actionNames.indexOf(this.config.coreFallbackActionName);
      if (i >= 0) fallback.probabilities[i] = this.config.coreFallbackThreshold;
    }
    return fallback;
  }

  private internalPredict(
    tracker: DialogueStateTracker,
    states: readonly DialogueState[],
  ): InternalPrediction {
    const none: InternalPrediction = {
      action: null,
      source: null,
      origin: null,
      events: [],
      noUser: false,
    };
    // Default intents right after the user spoke.
    if (tracker.latestActionName === ACTION_LISTEN_NAME) {
      const intent = tracker.latestMessage.intent.name;
      if (typeof intent === 'string' && DEFAULT_INTENT_ACTIONS[intent]) {
        return {
          ...none,
          action: DEFAULT_INTENT_ACTIONS[intent],
          source: `default ${intent}`,
          origin: DEFAULT_RULES + intent,
        };
      }
    }
    // Happy path of an active loop.
    const loop = tracker.activeLoopName;
    const rejected = tracker.activeLoop?.rejected ?? false;
    if (loop !== null && !rejected) {
      if (tracker.latestActionName !== loop) {
        return {
          ...none,
          action: loop,
          source: `loop ${loop}`,
          origin: LOOP_RULES + loop,
          noUser: true,
        };
      }
      return {
        ...none,
        action: ACTION_LISTEN_NAME,
        source: `loop ${loop}`,
        origin: LOOP_RULES + loop + LOOP_RULES_SEPARATOR + ACTION_LISTEN_NAME,
        noUser: true,
      };
    }
    return this.fromRules(tracker, states);
  }

  private fromRules(
    tracker: DialogueStateTracker,
    states: readonly DialogueState[],
  ): InternalPrediction {
    let best: Rule | null = null;
    for (const rule of this.rules) {
      if (!applicable(rule.states, states)) continue;
      if (best === null || rule.key.length > best.key.length) best = rule;
    }
    let action = best?.action ?? null;
    const events: DialogueEvent[] = [];
    const loop = tracker.activeLoopName;
    if (loop !== null) {
      const conditions = this.unhappy
        .filter((u) => applicable(u.states, states))
        .map((u) => u.value);
      const lastRuleState = best?.states[best.states.length - 1];
      const generalListen = action === ACTION_LISTEN_NAME && !lastRuleState?.active_loop;
      if (generalListen) {
        if (!conditions.includes(DO_NOT_PREDICT_LOOP_ACTION)) {
          // As Rasa, the origin stays the general rule's.
          return {
            action: loop,
            source: `loop ${loop}`,
            origin: best?.key ?? null,
            events,
            noUser: false,
          };
        }
        action = null;
      }
      if (conditions.includes(LOOP_WAS_INTERRUPTED)) {
        events.push(loopInterrupted({ isInterrupted: true, timestamp: Date.now() / 1000 }));
      }
    }
    if (action === null) {
      return { action: null, source: null, origin: null, events: [], noUser: false };
    }
    return {
      action,
      source: best?.sources.join(', ') ?? null,
      origin: best?.key ?? null,
      events,
      noUser: false,
    };
  }

  /**
   * Rasa's contradiction analysis: every rule must predict its own next actions. Returns the
   * origins of the predictions made: for rules all of them, for stories those that predicted
   * the story's own action.
   */
  private checkContradictions(trackers: readonly TrainingTracker[], domain: Domain): Set<string> {
    const problems: string[] = [];
    const origins = new Set<string>();
    for (const t of trackers) {
      const running = new DialogueStateTracker(t.name, domain.slots);
      let unpredictable = true;
      for (const event of t.events) {
        if (event.type !== 'action') {
          running.update(event);
          continue;
        }
        if (event.name === RULE_SNIPPET_ACTION_NAME) {
          unpredictable = true;
          continue;
        }
        if (unpredictable) {
          unpredictable = false;
          running.update(event);
          continue;
        }
        const gold = event.name ?? event.actionText ?? '';
        let found = this.internalPredict(running, trackerStates(running, domain));
        const loop = running.activeLoopName;
        if (loop !== null && found.action === loop) {
          const probe = running.copy();
          probe.update(actionExecutionRejected({ name: loop, timestamp: 0 }));
          found = this.internalPredict(probe, trackerStates(probe, domain));
        }
        if (found.origin !== null && (t.isRule || found.action === gold)) {
          origins.add(found.origin);
        }
        if (found.action !== null && found.action !== gold) {
          const storyListen = !t.isRule && found.action === ACTION_LISTEN_NAME;
          if (!storyListen) {
            problems.push(
              `- the prediction of the action '${gold}' in ${t.isRule ? 'rule' : 'story'} '${t.name}' (${t.file}:${t.line ?? '?'}) is contradicting with rule(s) '${found.source ?? '?'}'.`,
            );
          }
        }
        running.update(event);
      }
    }
    if (problems.length > 0) {
      throw new DialogueError(
        'DIALOGUE.INVALID_RULE',
        `Contradicting rules or stories found 🚨\n\n${[...new Set(problems)].join('\n')}\nPlease update your stories and rules so that they don't contradict each other.`,
        { problems },
      );
    }
    return origins;
  }
}

function defaultOrigins(): string[] {
  return Object.keys(DEFAULT_INTENT_ACTIONS).map((intent) => DEFAULT_RULES + intent);
}

function loopOrigins(domain: Domain): string[] {
  return Object.keys(domain.forms).flatMap((form) => [
    LOOP_RULES + form,
    LOOP_RULES + form + LOOP_RULES_SEPARATOR + ACTION_LISTEN_NAME,
  ]);
}

/**
 * Rasa's `_find_rule_only_slots_loops`: the slots and active loops that appear in the states of
 * rules but in no state of a story.
 */
export function findRuleOnlyData(
  ruleTrackers: readonly TrainingTracker[],
  storyTrackers: readonly TrainingTracker[],
  domain: Domain,
): RuleOnlyData {
  const collect = (trackers: readonly TrainingTracker[]) => {
    const slots = new Set<string>();
    const loops = new Set<string>();
    for (const t of trackers) {
      // The states before each action, as Rasa's training states (not the one after the last).
      const states = statesForEvents(t.name, appliedEvents(t.events), domain).slice(0, -1);
      for (const state of states) {
        for (const slot of Object.keys(state.slots ?? {})) slots.add(slot);
        const loop = state.active_loop?.name;
        if (loop) loops.add(loop);
      }
    }
    return { slots, loops };
  };
  const rules = collect(ruleTrackers);
  const stories = collect(storyTrackers);
  const only = (a: Set<string>, b: Set<string>) =>
    [...a].filter((x) => !b.has(x) && x !== SHOULD_NOT_BE_SET).sort();
  const slots = only(rules.slots, stories.slots);
  const loops = only(rules.loops, stories.loops);
  return slots.length === 0 && loops.length === 0 ? NO_RULE_ONLY_DATA : { slots, loops };
}

/** Slots and active loops an action sets in rules (Rasa's `ActionFingerprint`). */
interface ActionFingerprint {
  readonly slots: Set<string>;
  readonly loops: Set<string | null>;
}

/**
 * Rasa's `create_action_fingerprints` over the rules: for every action, the featurised slots and
 * the active loops set by the events after it (up to the next action or user message).
 */
function actionFingerprints(
  rules: readonly TrainingTracker[],
  domain: Domain,
): Map<string, ActionFingerprint> {
  const featurized = new Set(
    domain.slots.filter((s) => slotFeatures(s, null).length > 0).map((s) => s.name),
  );
  const out = new Map<string, ActionFingerprint>();
  for (const t of rules) {
    let action: string | null = null;
    for (const e of t.events) {
      if (e.type === 'action') {
        action = e.name ?? e.actionText ?? null;
        continue;
      }
      if (e.type === 'user') {
        action = null;
        continue;
      }
      if (action === null) continue;
      let print = out.get(action);
      if (!print) {
        print = { slots: new Set(), loops: new Set() };
        out.set(action, print);
      }
      if (e.type === 'slot' && featurized.has(e.name)) print.slots.add(e.name);
      if (e.type === 'active_loop') print.loops.add(e.name);
    }
  }
  return out;
}

/**
 * Rasa's incomplete-rule check: an action that sets slots or an active loop in one rule must be
 * followed by the same slots / one of the same loops in every rule where another action comes
 * after it (`null` counts as set; `...` or `wait_for_user_input: false` ends the obligation).
 */
function checkIncompleteRules(rules: readonly TrainingTracker[], domain: Domain): void {
  const prints = actionFingerprints(rules, domain);
  if (prints.size === 0) return;
  const problems: string[] = [];
  for (const t of rules) {
    const applied = appliedEvents(t.events);
    const states = statesForEvents(t.name, applied, domain);
    const next = applied.flatMap((e) =>
      e.type === 'action' ? [e.name ?? e.actionText ?? ''] : [],
    );
    const where = `rule '${t.name}' (${t.file}:${t.line ?? '?'})`;
    states.forEach((state, k) => {
      const previous = state.prev_action?.action_name;
      const action = next[k] ?? ACTION_LISTEN_NAME;
      const print = previous === undefined ? undefined : prints.get(previous);
      if (
        previous === undefined ||
        print === undefined ||
        action === RULE_SNIPPET_ACTION_NAME ||
        previous === RULE_SNIPPET_ACTION_NAME
      ) {
        return;
      }
      const present = new Set(Object.keys(state.slots ?? {}));
      const missing = [...print.slots].filter((s) => !present.has(s)).sort();
      if (missing.length > 0) {
        problems.push(
          `- the action '${previous}' in ${where} does not set some of the slots that it sets in other rules: '${missing.join(', ')}'. Add them to the rule (\`slot_was_set\`) or, if it is the rule's last action, add 'wait_for_user_input: false'.`,
        );
      }
      const loop = state.active_loop?.name ?? null;
      if (print.loops.size > 0 && !print.loops.has(loop)) {
        const expected = [...print.loops].map((l) =>
          l === null || l === SHOULD_NOT_BE_SET ? 'null' : l,
        );
        problems.push(
          `- the form '${previous}' in ${where} does not set the 'active_loop' that it sets in other rules: '${[...new Set(expected)].sort().join(', ')}'. Add the 'active_loop' step to the rule or, if it is the rule's last action, add 'wait_for_user_input: false'.`,
        );
      }
    });
  }
  if (problems.length > 0) {
    throw new DialogueError(
      'DIALOGUE.INVALID_RULE',
      `Incomplete rules found 🚨\n\n${problems.join('\n')}\nIf some slots or active loops must not be set at that point, set them to null in the rule explicitly.`,
      { problems },
    );
  }
}

function checkRestrictedRules(rules: readonly TrainingTracker[]): void {
  const bad = rules.filter((r) => r.userTurns > 1);
  if (bad.length === 0) return;
  const list = bad.map((r) => `- rule '${r.name}' (${r.file}:${r.line ?? '?'})`).join('\n');
  throw new DialogueError(
    'DIALOGUE.INVALID_RULE',
    `Found rules with more than one user message:\n${list}\nRules are meant for short pieces of conversation with at most one user message (restrict_rules). Turn them into stories, or set 'restrict_rules: false' for the RulePolicy.`,
    { rules: bad.map((r) => ({ name: r.name, file: r.file, line: r.line ?? null })) },
  );
}

/** Keys of a rule: the states after the last `...` state. */
function afterSnippet(states: readonly DialogueState[]): DialogueState[] {
  const out: DialogueState[] = [];
  for (let i = states.length - 1; i >= 0; i--) {
    const s = states[i] as DialogueState;
    if (s.prev_action?.action_name === RULE_SNIPPET_ACTION_NAME) break;
    out.unshift(s);
  }
  return out;
}

function buildRules(trackers: readonly TrainingTracker[], domain: Domain): Rule[] {
  // As in Rasa, a later rule with the same key overwrites an earlier one; the contradiction
  // check then reports the rule that lost.
  const byKey = new Map<string, Rule>();
  for (const t of trackers) {
    for (const ex of examplesOf(t, domain)) {
      const states = afterSnippet(ex.states);
      if (states.length === 0) continue;
      const key = stateKey(states);
      const known = byKey.get(key);
      if (known !== undefined && known.action === ex.label) {
        if (!known.sources.includes(t.name)) known.sources.push(t.name);
      } else byKey.set(key, { states, key, action: ex.label, sources: [t.name] });
    }
  }
  return [...byKey.values()].filter((r) => r.action !== RULE_SNIPPET_ACTION_NAME);
}

function buildUnhappy(
  trackers: readonly TrainingTracker[],
  domain: Domain,
): { states: DialogueState[]; value: string }[] {
  const lookup = new Map<string, { states: DialogueState[]; value: string }>();
  for (const t of trackers) {
    for (const ex of examplesOf(t, domain)) {
      const last = ex.states[ex.states.length - 1];
      const loop = last?.active_loop?.name;
      if (!last || !loop || loop === SHOULD_NOT_BE_SET) continue;
      const prev = ex.states[ex.states.length - 2];
      const states: DialogueState[] =
        ex.states.length === 1 || !prev?.prev_action
          ? [last]
          : [{ prev_action: prev.prev_action }, last];
      const keyStates = afterSnippet(states);
      if (keyStates.length === 0) continue;
      const key = stateKey(keyStates);
      if (isPrevActionListen(last) && ex.label === loop) {
        lookup.set(key, { states: keyStates, value: LOOP_WAS_INTERRUPTED });
      } else if (!isPrevActionListen(last) && ex.label !== loop) {
        lookup.set(key, { states: keyStates, value: DO_NOT_PREDICT_LOOP_ACTION });
      }
    }
  }
  return [...lookup.values()];
}

/** Rasa's `_is_rule_applicable` over the whole conversation, walking back from its end. */
function applicable(
  rule: readonly DialogueState[],
  conversation: readonly DialogueState[],
): boolean {
  for (let i = 0; i < conversation.length; i++) {
    if (i >= rule.length) return true;
    const ruleState = rule[rule.length - 1 - i] as DialogueState;
    const state = conversation[conversation.length - 1 - i] as DialogueState;
    const currentPrev = state.prev_action !== undefined;
    const rulePrev = ruleState.prev_action !== undefined;
    if (!currentPrev && !rulePrev) continue;
    if (!currentPrev || !rulePrev) return false;
    if (!matches(ruleState, state)) return false;
  }
  return true;
}

/** One condition of a rule state: `state[part][key]` must equal `value` (or be unset). */
interface Condition {
  readonly part: string;
  readonly key: string;
  readonly value: unknown;
}

/** Rule states as flat condition lists, made once per rule state (they never change). */
const compiledStates = new WeakMap<DialogueState, readonly Condition[]>();

function conditionsOf(rule: DialogueState): readonly Condition[] {
  let conditions = compiledStates.get(rule);
  if (conditions === undefined) {
    const list: Condition[] = [];
    for (const [part, sub] of Object.entries(rule) as [string, Record<string, unknown>][]) {
      for (const [key, value] of Object.entries(sub)) {
        // Empty values match anything: they are not conditions.
        if (value === undefined || value === null || value === '') continue;
        list.push({ part, key, value });
      }
    }
    conditions = list;
    compiledStates.set(rule, conditions);
  }
  return conditions;
}

function matches(rule: DialogueState, state: DialogueState): boolean {
  const conditions = conditionsOf(rule);
  for (let i = 0; i < conditions.length; i++) {
    const { part, key, value } = conditions[i] as Condition;
    const current = (state as Record<string, Record<string, unknown> | undefined>)[part];
    const actual = current === undefined ? undefined : current[key];
    if (value === SHOULD_NOT_BE_SET) {
      if (actual !== undefined && actual !== null && actual !== SHOULD_NOT_BE_SET) return false;
      continue;
    }
    if (!sameValue(actual, value)) return false;
  }
  return true;
}

/** Equality of state values: strings, numbers, and arrays of them. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** States of events (for tests and tools). */
export function ruleStatesOf(events: readonly DialogueEvent[], domain: Domain): DialogueState[] {
  return statesForEvents('rule', events, domain);
}
