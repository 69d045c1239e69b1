import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type BotUttered } from 'src/core/events/bot-uttered';
import {
  type DialogueEvent,
  type DialogueEventOf,
  type DialogueEventType,
} from 'src/core/events/dialogue-event';
import {
  carryStackStep,
  EMPTY_STACK,
  type DialogueStackUpdated,
} from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { eventKind } from 'src/core/events/event-catalogue';
import { serializeEvent } from 'src/core/events/event-codec';
import { cloneJson, extendable } from 'src/core/events/json-values';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import {
  type LatestAction,
  type TrackerActiveLoop,
  type TrackerState,
} from 'src/core/events/tracker-state';
import { userUttered, type UserUttered } from 'src/core/events/user-uttered';
import { applyEventTo, loopNamesOf } from 'src/core/tracker/applied-events';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

/** Value of an active loop's name that rules use for "must not be set". */
const SHOULD_NOT_BE_SET = 'should_not_be_set';
const METADATA_MODEL_ID = 'model_id';
const METADATA_ASSISTANT_ID = 'assistant_id';

export { type LatestAction, type TrackerActiveLoop } from 'src/core/events/tracker-state';

function everySlot(): boolean {
  return true;
}

function emptyUserUttered(): UserUttered {
  return userUttered({ timestamp: 0 });
}

/**
 * The state of one conversation (Rasa `DialogueStateTracker`): the event log plus the state the
 * events produce. State changes only by applying events (`update`).
 */
export class DialogueStateTracker {
  /** Appended to only; replaced once, by `copy`, before the copy is handed out. */
  private log: DialogueEvent[] = [];
  /** What the events produce; changed only by catalogue entries' `apply`. */
  private readonly state: MutableTrackerState;

  /** When set, `update` adds `model_id` to event metadata that lacks it (Rasa does). */
  modelId: string | null = null;
  /** When set, `update` adds `assistant_id` to event metadata that lacks it. */
  assistantId: string | null = null;

  /** `stateOf`: a tracker whose state this one starts from (for `copy`); default: initial. */
  constructor(
    readonly senderId: string,
    private readonly slotDefinitions: readonly SlotDefinition[],
    stateOf?: DialogueStateTracker,
  ) {
    this.state = new MutableTrackerState(
      slotDefinitions,
      () => this.appliedEvents(),
      stateOf?.state ?? null,
    );
  }

  /** A tracker with `events` applied in order, slots from the domain. */
  static fromEvents(
    senderId: string,
    events: readonly DialogueEvent[],
    domain: Domain,
  ): DialogueStateTracker {
    const tracker = new DialogueStateTracker(senderId, domain.slots);
    for (const event of events) tracker.update(event);
    return tracker;
  }

  /** Every event the tracker holds, oldest first. */
  get events(): readonly DialogueEvent[] {
    return this.log;
  }

  /** The slot definitions this tracker knows. */
  get slots(): readonly SlotDefinition[] {
    return this.slotDefinitions;
  }

  /** Appends the event (stamping model/assistant ids when configured) and applies it. */
  update(event: DialogueEvent): void {
    let e = event;
    const addModel = this.modelId !== null && !(METADATA_MODEL_ID in e.metadata);
    const addAssistant = this.assistantId !== null && !(METADATA_ASSISTANT_ID in e.metadata);
    if (addModel || addAssistant) {
      // One copy with both stamps (this runs for every event of every turn). Copied with
      // Object.assign, not a spread: see `extendable` in json-values.
      const metadata: JsonObject = extendable(e.metadata);
      if (addModel) metadata[METADATA_MODEL_ID] = this.modelId;
      if (addAssistant) metadata[METADATA_ASSISTANT_ID] = this.assistantId;
      const copy = { ...e, metadata };
      if (e.type === 'stack') carryStackStep(e, copy as DialogueStackUpdated);
      e = copy;
    }
    this.log.push(e);
    this.apply(e);
  }

  /**
   * The events that make up the current state (see `appliedEvents`). Kept up to date
   * incrementally as events arrive — a turn asks for them many times, and a long conversation
   * would otherwise be walked from its start each time — and recomputed from the whole log only
   * when a new event activates a loop never seen before (that changes how earlier loop actions
   * apply). The list is shared: callers must not change it.
   */
  appliedEvents(): readonly DialogueEvent[] {
    let cache = this.appliedCache;
    if (cache !== null) {
      for (let i = cache.upTo; i < this.log.length; i++) {
        const e = this.log[i] as DialogueEvent;
        if (e.type === 'active_loop' && e.name && !cache.loops.has(e.name)) {
          cache = null;
          break;
        }
      }
    }
    if (cache === null) {
      cache = { list: [], upTo: 0, loops: loopNamesOf(this.log) };
      this.appliedCache = cache;
    }
    for (let i = cache.upTo; i < this.log.length; i++) {
      applyEventTo(cache.list, this.log[i] as DialogueEvent, cache.loops);
    }
    cache.upTo = this.log.length;
    return cache.list;
  }

  private appliedCache: { list: DialogueEvent[]; upTo: number; loops: Set<string> } | null = null;

  /** Events after the latest `restart` (the restart itself excluded). */
  eventsAfterLatestRestart(): DialogueEvent[] {
    for (let i = this.log.length - 1; i >= 0; i--) {
      if (this.log[i]?.type === 'restart') return this.log.slice(i + 1);
    }
    return [...this.log];
  }

  /** The events a dump includes for a verbosity; `null` for `NONE`. */
  eventsForVerbosity(verbosity: EventVerbosity): DialogueEvent[] | null {
    switch (verbosity) {
      case EventVerbosity.ALL:
        return [...this.log];
      case EventVerbosity.AFTER_RESTART:
        return this.eventsAfterLatestRestart();
      case EventVerbosity.APPLIED:
        return [...this.appliedEvents()];
      case EventVerbosity.NONE:
        return null;
    }
  }

  /** The latest event of a kind (by default among the applied events), or undefined. */
  lastEventOf<T extends DialogueEventType>(
    type: T,
    options: { verbosity?: EventVerbosity; excludeActions?: readonly string[]; skip?: number } = {},
  ): DialogueEventOf<T> | undefined {
    const verbosity = options.verbosity ?? EventVerbosity.APPLIED;
    const events =
      verbosity === EventVerbosity.APPLIED
        ? this.appliedEvents()
        : (this.eventsForVerbosity(verbosity) ?? []);
    let skip = options.skip ?? 0;
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as DialogueEvent;
      if (e.type !== type) continue;
      if (e.type === 'action' && e.name !== null && options.excludeActions?.includes(e.name)) {
        continue;
      }
      if (skip-- > 0) continue;
      return e as DialogueEventOf<T>;
    }
    return undefined;
  }

  /** Current slot values by name (every known slot). */
  slotValuesObject(): JsonObject {
    const out: JsonObject = {};
    const values = this.state.slotValues;
    for (const def of this.slotDefinitions) out[def.name] = values.get(def.name) ?? null;
    return out;
  }

  /** A slot's value; undefined for an unknown slot. */
  getSlot(name: string): unknown {
    const values = this.state.slotValues;
    return values.has(name) ? values.get(name) : undefined;
  }

  /** The latest user message (an empty one after a reset). */
  get latestMessage(): UserUttered {
    return this.state.latestUser;
  }

  /** Entities of the latest user message incl. those added by `entities` events. */
  get latestMessageEntities(): readonly JsonObject[] {
    return this.state.latestUserEntities;
  }

  /** Featurisation flag of the latest user message (after `user_featurization` events). */
  get latestMessageUseTextForFeaturization(): boolean | null {
    return this.state.latestUserUseText;
  }

  /** Parse data of the latest message with `entities` replaced by the merged entity list. */
  latestMessageData(): JsonObject {
    return { ...this.state.latestUser.parseData, entities: this.state.latestUserEntities };
  }

  get latestBotUtterance(): BotUttered | null {
    return this.state.latestBot;
  }

  get latestAction(): LatestAction {
    return this.state.latestAction;
  }

  /** Name (or end-to-end text) of the latest action; null before any action. */
  get latestActionName(): string | null {
    return this.state.latestActionName;
  }

  get activeLoop(): TrackerActiveLoop | null {
    return this.state.loop;
  }

  /** Name of the active loop; null when none (or the rule placeholder `should_not_be_set`). */
  get activeLoopName(): string | null {
    return this.state.activeLoopName;
  }

  get followupAction(): string | null {
    return this.state.followup;
  }

  get paused(): boolean {
    return this.state.paused;
  }

  /** The dialogue stack (Rasa Pro): a list of frames. */
  get stack(): readonly unknown[] {
    return this.state.stack;
  }

  /** `input_channel` of the latest user event among all events, or null. */
  get latestInputChannel(): string | null {
    for (let i = this.log.length - 1; i >= 0; i--) {
      const e = this.log[i] as DialogueEvent;
      if (e.type === 'user') return e.inputChannel;
    }
    return null;
  }

  /** Timestamp of the last event, or null without events. */
  get latestEventTime(): number | null {
    return this.log[this.log.length - 1]?.timestamp ?? null;
  }

  /**
   * The tracker as JSON (Rasa `current_state`), keys in Rasa's order. `events` holds the
   * serialised events of the verbosity, or `null` for `NONE`. `serialize` may hand out an
   * event's already serialised form (e.g. as stored) instead of serialising it again.
   */
  currentState(
    verbosity: EventVerbosity = EventVerbosity.NONE,
    serialize: (event: DialogueEvent) => SerializedEvent = serializeEvent,
  ): JsonObject {
    const events = this.eventsForVerbosity(verbosity);
    const loop = this.state.loop;
    return {
      sender_id: this.senderId,
      slots: this.slotValuesObject(),
      latest_message: this.latestMessageData(),
      latest_event_time: this.latestEventTime,
      followup_action: this.state.followup,
      paused: this.state.paused,
      stack: this.state.stack,
      events: events === null ? null : events.map((e) => serialize(e)),
      latest_input_channel: this.latestInputChannel,
      active_loop: loop
        ? {
            name: loop.name,
            is_interrupted: loop.isInterrupted,
            rejected: loop.rejected,
            trigger_message: loop.triggerMessage,
          }
        : {},
      latest_action: this.state.latestAction,
      latest_action_name: this.latestActionName,
    };
  }

  /** A new tracker (same slots) with an empty log. */
  initCopy(): DialogueStateTracker {
    return new DialogueStateTracker(this.senderId, this.slotDefinitions);
  }

  /**
   * The state at `until`: a new tracker fed the events in order while their timestamp is
   * `<= until`, stopping at the first later one.
   */
  travelBackInTime(until: number): DialogueStateTracker {
    const tracker = this.initCopy();
    for (const event of this.log) {
      if (event.timestamp <= until) tracker.update(event);
      else break;
    }
    return tracker;
  }

  /**
   * A copy holding the same events and state. The state is copied, not rebuilt by replaying the
   * log: events and state values are never changed in place (every change is a new value), so
   * the copy may share them.
   */
  copy(): DialogueStateTracker {
    const tracker = new DialogueStateTracker(this.senderId, this.slotDefinitions, this);
    // slice, not a push per event: a copy is made for every action with prediction events.
    tracker.log = this.log.slice();
    const cache = this.appliedCache;
    tracker.appliedCache =
      cache === null
        ? null
        : { list: cache.list.slice(), upTo: cache.upTo, loops: new Set(cache.loops) };
    return tracker;
  }

  /** Applies one event to the state, as its catalogue entry says. */
  private apply(event: DialogueEvent): void {
    eventKind(event.type).apply?.(event, this.state);
  }
}

/** The tracker's state, which catalogue entries change (see `TrackerState`). */
class MutableTrackerState implements TrackerState {
  readonly slotValues = new Map<string, unknown>();
  paused = false;
  followup: string | null = ACTION_LISTEN_NAME;
  latestAction: LatestAction = {};
  latestUser: UserUttered = emptyUserUttered();
  latestUserEntities: readonly JsonObject[] = [];
  latestUserUseText: boolean | null = null;
  latestBot: BotUttered | null = null;
  loop: TrackerActiveLoop | null = null;
  stack: readonly unknown[] = EMPTY_STACK;

  /** `from`: a state to take over (values shared, see `copyFrom`); null: the initial state. */
  constructor(
    private readonly slotDefinitions: readonly SlotDefinition[],
    private readonly appliedEvents: () => readonly DialogueEvent[],
    from: MutableTrackerState | null,
  ) {
    if (from === null) this.reset();
    else this.copyFrom(from);
  }

  get latestActionName(): string | null {
    const a = this.latestAction as { action_name?: string; action_text?: string };
    return a.action_name || a.action_text || null;
  }

  get activeLoopName(): string | null {
    if (!this.loop || this.loop.name === SHOULD_NOT_BE_SET) return null;
    return this.loop.name;
  }

  setLatestAction(action: LatestAction): void {
    this.latestAction = action;
    if (this.loop !== null && this.activeLoopName) {
      this.loop = { ...this.loop, isInterrupted: false };
    }
    if (
      this.loop !== null &&
      (action as { action_name?: string }).action_name === this.activeLoopName
    ) {
      this.loop = { ...this.loop, rejected: false };
    }
  }

  resetSlots(which: (def: SlotDefinition) => boolean = everySlot): void {
    for (const def of this.slotDefinitions) {
      if (which(def)) this.slotValues.set(def.name, cloneJson(def.initialValue ?? null));
    }
  }

  /** Rasa `_reset`: initial state; the log is kept. */
  reset(): void {
    this.resetSlots();
    this.paused = false;
    this.latestAction = {};
    this.latestUser = emptyUserUttered();
    this.latestUserEntities = [];
    this.latestUserUseText = null;
    this.latestBot = null;
    this.followup = ACTION_LISTEN_NAME;
    this.loop = null;
    this.stack = EMPTY_STACK;
  }

  /** Takes over every field of `other` (values are shared: they are never changed in place). */
  copyFrom(other: MutableTrackerState): void {
    this.slotValues.clear();
    for (const [name, value] of other.slotValues) this.slotValues.set(name, value);
    this.paused = other.paused;
    this.followup = other.followup;
    this.latestAction = other.latestAction;
    this.latestUser = other.latestUser;
    this.latestUserEntities = other.latestUserEntities;
    this.latestUserUseText = other.latestUserUseText;
    this.latestBot = other.latestBot;
    this.loop = other.loop;
    this.stack = other.stack;
  }

  replayAppliedEvents(): void {
    for (const e of this.appliedEvents()) eventKind(e.type).apply?.(e, this);
  }
}
