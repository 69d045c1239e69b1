import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { SHOULD_NOT_BE_SET } from 'src/core/training-data/stories-yaml-reader';

/** The user part of a dialogue state: intent (or end-to-end text) and featurised entity labels. */
export interface UserSubState {
  intent?: string;
  text?: string;
  entities?: string[];
}

/**
 * One dialogue state (Rasa `State`): what the policies see before each action. Empty parts are
 * left out; a state without `prev_action` marks the start of a conversation.
 */
export interface DialogueState {
  user?: UserSubState;
  prev_action?: { action_name?: string; action_text?: string };
  slots?: Record<string, number[] | string>;
  active_loop?: { name: string };
}

/** Rasa's slot featurisation (`Slot.as_feature`); an empty array for slots that never featurise. */
export function slotFeatures(slot: SlotDefinition, value: unknown): number[] {
  if (!slot.influenceConversation) return [];
  switch (slot.type) {
    case 'any':
      return [];
    case 'bool':
      if (value === null || value === undefined) return [0, 0];
      return [1, isTrue(value) ? 1 : 0];
    case 'list':
      return [Array.isArray(value) ? (value.length > 0 ? 1 : 0) : value ? 1 : 0];
    case 'float': {
      const min = slot.minValue ?? 0;
      const max = slot.maxValue ?? 1;
      const n = typeof value === 'number' ? value : Number(value);
      if (value === null || value === undefined || Number.isNaN(n)) return [0];
      const clipped = Math.min(max, Math.max(min, n));
      return [(clipped - min) / (max - min)];
    }
    case 'categorical': {
      const values = (slot.values ?? []).map((v) => String(v).toLowerCase());
      if (!values.includes('__other__')) values.push('__other__');
      const out = values.map(() => 0);
      if (value === null || value === undefined) return out;
      const text =
        typeof value === 'object' ? JSON.stringify(value) : `${value as string | number | boolean}`;
      const i = values.indexOf(text.toLowerCase());
      out[i >= 0 ? i : values.indexOf('__other__')] = 1;
      return out;
    }
    default:
      return [value === null || value === undefined ? 0 : 1];
  }
}

function isTrue(value: unknown): boolean {
  if (typeof value === 'string') return ['true', '1', 'yes', 'y'].includes(value.toLowerCase());
  return Boolean(value);
}

/** The state of a tracker now (Rasa `Domain.get_active_state`). */
export function activeState(tracker: DialogueStateTracker, domain: Domain): DialogueState {
  const state: DialogueState = {};
  const user = tracker.latestMessage;
  const intent = typeof user.intent.name === 'string' ? user.intent.name : null;
  if (intent !== null || user.text) {
    const sub: UserSubState = {};
    if (intent !== null) sub.intent = intent;
    else if (user.text) sub.text = user.text;
    if (intent !== null) {
      const labels = new Set<string>();
      for (const e of tracker.latestMessageEntities) {
        if (typeof e.entity !== 'string') continue;
        labels.add(e.entity);
        if (typeof e.role === 'string') labels.add(`${e.entity}#${e.role}`);
        if (typeof e.group === 'string') labels.add(`${e.entity}#${e.group}`);
      }
      const wanted = domain.intent(intent)?.usedEntities;
      const entities = [...labels].filter((l) => wanted === undefined || wanted.includes(l)).sort();
      if (entities.length > 0) sub.entities = entities;
    }
    state.user = sub;
  }
  const latest = tracker.latestAction as { action_name?: string; action_text?: string };
  if (latest.action_name) state.prev_action = { action_name: latest.action_name };
  else if (latest.action_text) state.prev_action = { action_text: latest.action_text };
  const slots: Record<string, number[] | string> = {};
  for (const def of tracker.slots) {
    if (!def.influenceConversation) continue;
    const value = tracker.getSlot(def.name);
    if (value === SHOULD_NOT_BE_SET) {
      slots[def.name] = SHOULD_NOT_BE_SET;
      continue;
    }
    const f = slotFeatures(def, value);
    if (f.some((x) => x !== 0)) slots[def.name] = f;
  }
  if (Object.keys(slots).length > 0) state.slots = slots;
  const loop = tracker.activeLoop?.name;
  if (loop) state.active_loop = { name: loop };
  return state;
}

/**
 * One state per prior tracker (Rasa `states_for_tracker_history`): the state before each
 * executed action, then the current state. Built by replaying the applied events.
 */
export function statesForEvents(
  senderId: string,
  applied: readonly DialogueEvent[],
  domain: Domain,
  window: number | null = null,
): DialogueState[] {
  let skip = 0;
  if (window !== null) {
    let actions = 0;
    for (const e of applied) if (e.type === 'action') actions++;
    skip = Math.max(0, actions + 1 - window);
  }
  const replay = new DialogueStateTracker(senderId, domain.slots);
  const states: DialogueState[] = [];
  let k = 0;
  for (const e of applied) {
    if (e.type === 'action' && k++ >= skip) states.push(activeState(replay, domain));
    replay.update(e);
  }
  states.push(activeState(replay, domain));
  return states;
}

/** How many states a tracker's history has (one per executed action, plus the current one). */
export function stateCount(applied: readonly DialogueEvent[]): number {
  let n = 1;
  for (const e of applied) if (e.type === 'action') n++;
  return n;
}

/**
 * What the RulePolicy learned only from rules (Rasa's `rule_only_data`): slots and active loops
 * that appear in rule states but in no story state. The ML policies (memoization, TED) never
 * see them, nor the turns of rules that no story contains (`hide_rule_turn`).
 */
export interface RuleOnlyData {
  readonly slots: readonly string[];
  readonly loops: readonly string[];
}

export const NO_RULE_ONLY_DATA: RuleOnlyData = Object.freeze({ slots: [], loops: [] });

/**
 * Rasa's `states_for_tracker_history(ignore_rule_only_turns=True, rule_only_data)`, one prior
 * tracker at a time: a prior tracker before an action whose turn is hidden (the action carries
 * `hide_rule_turn`, and a followup action or the active loop's own happy path keep the previous
 * turn's verdict) gives no state; a visible state loses the rule-only slots and loop, keeps the
 * previous visible state's user input unless it follows `action_listen`, and takes the
 * previous action of the last visible turn. States that need no change are shared, not copied.
 */
class MlStates {
  readonly states: DialogueState[] = [];
  private lastAction: DialogueState['prev_action'] = undefined;
  private hidden = false;

  constructor(readonly ruleOnly: RuleOnlyData) {}

  /** Adds the state of a prior tracker whose next action has `hide` as `hide_rule_turn`. */
  push(tracker: DialogueStateTracker, state: DialogueState, hide: boolean): void {
    const next = this.step(tracker, state, hide);
    this.lastAction = next.lastAction;
    this.hidden = next.hidden;
    if (next.state !== null) this.states.push(next.state);
  }

  /** The state of the current tracker (not kept: more events may follow). */
  current(tracker: DialogueStateTracker, state: DialogueState): DialogueState | null {
    return this.step(tracker, state, false).state;
  }

  private step(
    tracker: DialogueStateTracker,
    state: DialogueState,
    hide: boolean,
  ): { lastAction: DialogueState['prev_action']; hidden: boolean; state: DialogueState | null } {
    let lastAction = this.lastAction;
    let hidden = this.hidden;
    if (!hidden) lastAction = state.prev_action;
    if (tracker.followupAction === null && tracker.latestActionName !== tracker.activeLoopName) {
      hidden = hide;
    }
    if (hidden) return { lastAction, hidden, state: null };
    return { lastAction, hidden, state: this.visible(state, lastAction) };
  }

  private visible(state: DialogueState, lastAction: DialogueState['prev_action']): DialogueState {
    const stripped = withoutRuleOnly(state, this.ruleOnly);
    let user = stripped.user;
    const previous = this.states[this.states.length - 1];
    if (previous !== undefined && !isPrevActionListen(state)) {
      if (previous.user === undefined) user = undefined;
      else if (!sameUser(previous.user, user)) user = previous.user;
    }
    const prevAction =
      lastAction !== undefined && !samePrevAction(lastAction, state.prev_action)
        ? lastAction
        : state.prev_action;
    if (user === stripped.user && prevAction === stripped.prev_action) return stripped;
    return canonicalState(user, prevAction, stripped.slots, stripped.active_loop);
  }
}

/** A state without the rule-only slots and loop (the same object when it has none). */
export function withoutRuleOnly(state: DialogueState, ruleOnly: RuleOnlyData): DialogueState {
  const { slots: ruleSlots, loops: ruleLoops } = ruleOnly;
  if (ruleSlots.length === 0 && ruleLoops.length === 0) return state;
  const all = state.slots;
  let slots = all;
  if (all !== undefined && ruleSlots.some((s) => s in all)) {
    const kept: Record<string, number[] | string> = {};
    for (const [name, value] of Object.entries(all)) {
      if (!ruleSlots.includes(name)) kept[name] = value;
    }
    slots = Object.keys(kept).length > 0 ? kept : undefined;
  }
  const loop =
    state.active_loop !== undefined && ruleLoops.includes(state.active_loop.name)
      ? undefined
      : state.active_loop;
  if (slots === state.slots && loop === state.active_loop) return state;
  return canonicalState(state.user, state.prev_action, slots, loop);
}

/** A state with its parts in `activeState`'s order, so state keys stay canonical. */
function canonicalState(
  user: DialogueState['user'],
  prevAction: DialogueState['prev_action'],
  slots: DialogueState['slots'],
  loop: DialogueState['active_loop'],
): DialogueState {
  const out: DialogueState = {};
  if (user !== undefined) out.user = user;
  if (prevAction !== undefined) out.prev_action = prevAction;
  if (slots !== undefined) out.slots = slots;
  if (loop !== undefined) out.active_loop = loop;
  return out;
}

function sameUser(a: UserSubState, b: UserSubState | undefined): boolean {
  if (b === undefined) return false;
  if (a === b) return true;
  if (a.intent !== b.intent || a.text !== b.text) return false;
  const x = a.entities ?? [];
  const y = b.entities ?? [];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function samePrevAction(
  a: NonNullable<DialogueState['prev_action']>,
  b: DialogueState['prev_action'],
): boolean {
  return b !== undefined && a.action_name === b.action_name && a.action_text === b.action_text;
}

/**
 * The states the ML policies see for a list of applied events (see `MlStates`): the same as
 * `statesForEvents` when nothing is hidden and no rule-only data applies.
 */
export function mlStatesForEvents(
  senderId: string,
  applied: readonly DialogueEvent[],
  domain: Domain,
  ruleOnly: RuleOnlyData,
): DialogueState[] {
  const replay = new DialogueStateTracker(senderId, domain.slots);
  const ml = new MlStates(ruleOnly);
  for (const e of applied) {
    if (e.type === 'action') ml.push(replay, activeState(replay, domain), e.hideRuleTurn);
    replay.update(e);
  }
  const current = ml.current(replay, activeState(replay, domain));
  return current === null ? ml.states : [...ml.states, current];
}

/**
 * A live tracker's state history, built incrementally: the replay of its applied events so far
 * and the state before each action (plus, once asked for, the ML policies' view of them). Kept
 * per tracker (weakly) so each prediction replays only the events added since the last one,
 * not the whole conversation.
 */
interface StateHistory {
  readonly domain: Domain;
  readonly replay: DialogueStateTracker;
  readonly beforeActions: DialogueState[];
  /** The ML view, for the rule-only data last asked for (rebuilt when that changes). */
  ml: MlStates | undefined;
  consumed: number;
  first: DialogueEvent | undefined;
  last: DialogueEvent | undefined;
}

const histories = new WeakMap<DialogueStateTracker, StateHistory>();

function stateHistory(
  tracker: DialogueStateTracker,
  domain: Domain,
  ruleOnly: RuleOnlyData | undefined = undefined,
): StateHistory {
  const applied = tracker.appliedEvents();
  let h = histories.get(tracker);
  // The applied events only ever grow at the end, except after restarts, rewinds, undos and
  // loop re-runs; then the events at the replayed positions are no longer the same objects
  // (an event object sits at one position only), and the history starts again. So it does
  // when the ML view is first asked for after events were consumed without it, or with other
  // rule-only data.
  if (
    h === undefined ||
    h.domain !== domain ||
    h.consumed > applied.length ||
    (h.consumed > 0 && (applied[0] !== h.first || applied[h.consumed - 1] !== h.last)) ||
    (ruleOnly !== undefined && (h.ml === undefined ? h.consumed > 0 : h.ml.ruleOnly !== ruleOnly))
  ) {
    h = {
      domain,
      replay: new DialogueStateTracker(tracker.senderId, domain.slots),
      beforeActions: [],
      ml: ruleOnly === undefined ? undefined : new MlStates(ruleOnly),
      consumed: 0,
      first: undefined,
      last: undefined,
    };
    histories.set(tracker, h);
  } else if (ruleOnly !== undefined && h.ml === undefined) {
    h.ml = new MlStates(ruleOnly);
  }
  for (let i = h.consumed; i < applied.length; i++) {
    const e = applied[i] as DialogueEvent;
    if (e.type === 'action') {
      const state = activeState(h.replay, domain);
      h.beforeActions.push(state);
      h.ml?.push(h.replay, state, e.hideRuleTurn);
    }
    h.replay.update(e);
  }
  h.consumed = applied.length;
  h.first = applied[0];
  h.last = applied[applied.length - 1];
  return h;
}

/**
 * States of a live tracker — the same as `statesForEvents` over its applied events (the last
 * `window` ones, or all), kept incrementally (see StateHistory). The returned states are shared
 * with later calls: callers must not change them.
 */
export function trackerStates(
  tracker: DialogueStateTracker,
  domain: Domain,
  window: number | null = null,
): DialogueState[] {
  const h = stateHistory(tracker, domain);
  const from = window === null ? 0 : Math.max(0, h.beforeActions.length + 1 - window);
  const states = h.beforeActions.slice(from);
  states.push(activeState(h.replay, domain));
  return states;
}

/** How many states a live tracker's history has (see `stateCount`). */
export function trackerStateCount(tracker: DialogueStateTracker, domain: Domain): number {
  return stateHistory(tracker, domain).beforeActions.length + 1;
}

/** A live tracker's states as the ML policies see them, and how many there are in all. */
export interface MlTrackerStates {
  /** The last `window` ML states (all when null); shared with later calls, never to be changed. */
  readonly states: DialogueState[];
  readonly count: number;
}

/**
 * Both views of a live tracker at once (the policies' input): its full state history (last
 * `window` states) and the ML view (`mlStatesForEvents`), both kept incrementally.
 */
export function trackerStateViews(
  tracker: DialogueStateTracker,
  domain: Domain,
  ruleOnly: RuleOnlyData,
  window: number | null,
): { states: DialogueState[]; count: number; ml: MlTrackerStates } {
  const h = stateHistory(tracker, domain, ruleOnly);
  const ml = h.ml as MlStates;
  const current = activeState(h.replay, domain);
  const from = window === null ? 0 : Math.max(0, h.beforeActions.length + 1 - window);
  const states = h.beforeActions.slice(from);
  states.push(current);
  const mlCurrent = ml.current(h.replay, current);
  const mlCount = ml.states.length + (mlCurrent === null ? 0 : 1);
  const mlFrom = window === null ? 0 : Math.max(0, mlCount - window);
  const mlStates = ml.states.slice(mlFrom);
  if (mlCurrent !== null) mlStates.push(mlCurrent);
  return {
    states,
    count: h.beforeActions.length + 1,
    ml: { states: mlStates, count: mlCount },
  };
}

/**
 * The lookup key of a state list. Every state is built by `activeState`, which always adds its
 * parts (and slots, in domain order) in the same order, so plain JSON is canonical.
 */
export function stateKey(states: readonly DialogueState[]): string {
  return JSON.stringify(states);
}

export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function isPrevActionListen(state: DialogueState | undefined): boolean {
  return state?.prev_action?.action_name === ACTION_LISTEN_NAME;
}
