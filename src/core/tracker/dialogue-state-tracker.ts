import { type Domain } from 'src/core/domain/domain';
import { ACTION_LISTEN_NAME, ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type BotUttered } from 'src/core/events/bot-uttered';
import {
  type DialogueEvent,
  type DialogueEventOf,
  type DialogueEventType,
} from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { serializeEvent } from 'src/core/events/event-codec';
import { cloneJson, extendable, jsonEqual } from 'src/core/events/json-values';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { userUttered, type UserUttered } from 'src/core/events/user-uttered';
import { applyEventTo, loopNamesOf } from 'src/core/tracker/applied-events';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';
import { applyJsonPatch } from 'src/core/tracker/json-patch';

/** Value of an active loop's name that rules use for "must not be set". */
const SHOULD_NOT_BE_SET = 'should_not_be_set';
const METADATA_MODEL_ID = 'model_id';
const METADATA_ASSISTANT_ID = 'assistant_id';

/** The active loop (form) of a conversation (Rasa `TrackerActiveLoop`). */
export interface TrackerActiveLoop {
  readonly name: string | null;
  readonly isInterrupted: boolean;
  readonly rejected: boolean;
  /** Parse data of the user message that activated the loop. */
  readonly triggerMessage: Readonly<JsonObject> | null;
}

/** The latest action: `{ action_name }` or `{ action_text }`; `{}` before any action. */
export type LatestAction =
  { action_name: string } | { action_text: string } | Record<string, never>;

function emptyUserUttered(): UserUttered {
  return userUttered({ timestamp: 0 });
}

/**
 * The state of one conversation (Rasa `DialogueStateTracker`): the event log plus the state the
 * events produce. State changes only by applying events (`update`).
 */
export class DialogueStateTracker {
  private readonly log: DialogueEvent[] = [];
  private readonly slotValues = new Map<string, unknown>();
  private pausedFlag = false;
  private followup: string | null = ACTION_LISTEN_NAME;
  private latestActionState: LatestAction = {};
  private latestUser: UserUttered = emptyUserUttered();
  private latestUserEntities: JsonObject[] = [];
  private latestUserUseText: boolean | null = null;
  private latestBot: BotUttered | null = null;
  private loop: TrackerActiveLoop | null = null;
  private stackState: unknown[] = [];

  /** When set, `update` adds `model_id` to event metadata that lacks it (Rasa does). */
  modelId: string | null = null;
  /** When set, `update` adds `assistant_id` to event metadata that lacks it. */
  assistantId: string | null = null;

  constructor(
    readonly senderId: string,
    private readonly slotDefinitions: readonly SlotDefinition[],
  ) {
    this.reset();
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
      e = { ...e, metadata };
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
    for (const def of this.slotDefinitions) out[def.name] = this.slotValues.get(def.name) ?? null;
    return out;
  }

  /** A slot's value; undefined for an unknown slot. */
  getSlot(name: string): unknown {
    return this.slotValues.has(name) ? this.slotValues.get(name) : undefined;
  }

  /** The latest user message (an empty one after a reset). */
  get latestMessage(): UserUttered {
    return this.latestUser;
  }

  /** Entities of the latest user message incl. those added by `entities` events. */
  get latestMessageEntities(): readonly JsonObject[] {
    return this.latestUserEntities;
  }

  /** Featurisation flag of the latest user message (after `user_featurization` events). */
  get latestMessageUseTextForFeaturization(): boolean | null {
    return this.latestUserUseText;
  }

  /** Parse data of the latest message with `entities` replaced by the merged entity list. */
  latestMessageData(): JsonObject {
    return { ...this.latestUser.parseData, entities: this.latestUserEntities };
  }

  get latestBotUtterance(): BotUttered | null {
    return this.latestBot;
  }

  get latestAction(): LatestAction {
    return this.latestActionState;
  }

  /** Name (or end-to-end text) of the latest action; null before any action. */
  get latestActionName(): string | null {
    const a = this.latestActionState as { action_name?: string; action_text?: string };
    return a.action_name || a.action_text || null;
  }

  get activeLoop(): TrackerActiveLoop | null {
    return this.loop;
  }

  /** Name of the active loop; null when none (or the rule placeholder `should_not_be_set`). */
  get activeLoopName(): string | null {
    if (!this.loop || this.loop.name === SHOULD_NOT_BE_SET) return null;
    return this.loop.name;
  }

  get followupAction(): string | null {
    return this.followup;
  }

  get paused(): boolean {
    return this.pausedFlag;
  }

  /** The dialogue stack (Rasa Pro): a list of frames. */
  get stack(): readonly unknown[] {
    return this.stackState;
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
    return {
      sender_id: this.senderId,
      slots: this.slotValuesObject(),
      latest_message: this.latestMessageData(),
      latest_event_time: this.latestEventTime,
      followup_action: this.followup,
      paused: this.pausedFlag,
      stack: this.stackState,
      events: events === null ? null : events.map((e) => serialize(e)),
      latest_input_channel: this.latestInputChannel,
      active_loop: this.loop
        ? {
            name: this.loop.name,
            is_interrupted: this.loop.isInterrupted,
            rejected: this.loop.rejected,
            trigger_message: this.loop.triggerMessage,
          }
        : {},
      latest_action: this.latestActionState,
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

  /** A copy holding the same events and state. */
  copy(): DialogueStateTracker {
    return this.travelBackInTime(Number.POSITIVE_INFINITY);
  }

  private apply(event: DialogueEvent): void {
    switch (event.type) {
      case 'user':
        this.latestUser = event;
        this.latestUserEntities = [...event.entities];
        this.latestUserUseText = event.useTextForFeaturization;
        this.followup = null;
        return;
      case 'user_featurization':
        // Featurisation belongs to the latest user message, which is always after action_listen.
        if (this.latestActionName !== ACTION_LISTEN_NAME) return;
        this.latestUserUseText = event.useTextForFeaturization;
        return;
      case 'entities':
        if (this.latestActionName !== ACTION_LISTEN_NAME) return;
        for (const entity of event.entities) {
          if (!this.latestUserEntities.some((e) => jsonEqual(e, entity))) {
            this.latestUserEntities = [...this.latestUserEntities, entity];
          }
        }
        return;
      case 'bot':
        this.latestBot = event;
        return;
      case 'slot':
        // Unknown slots are ignored for the state; the event stays in the log.
        if (this.slotValues.has(event.name)) this.slotValues.set(event.name, event.value);
        return;
      case 'reset_slots':
        this.resetSlots();
        return;
      case 'restart':
        this.reset();
        this.followup = ACTION_SESSION_START_NAME;
        return;
      case 'rewind':
      case 'undo':
        this.reset();
        for (const e of this.appliedEvents()) this.apply(e);
        return;
      case 'session_started':
      case 'session_ended':
        this.reset();
        return;
      case 'routing_session_ended':
        this.resetSlots((def) => def.properties.shared_for_coexistence !== true);
        return;
      case 'action':
        this.setLatestAction(
          event.name ? { action_name: event.name } : { action_text: event.actionText ?? '' },
        );
        this.followup = null;
        return;
      case 'action_execution_rejected':
        if (this.loop !== null && event.name === this.activeLoopName) {
          this.loop = { ...this.loop, rejected: true };
        }
        return;
      case 'active_loop':
        this.loop =
          event.name === null
            ? null
            : {
                name: event.name,
                isInterrupted: false,
                rejected: false,
                triggerMessage: this.latestUser.parseData,
              };
        return;
      case 'loop_interrupted':
        if (this.loop !== null) this.loop = { ...this.loop, isInterrupted: event.isInterrupted };
        return;
      case 'followup':
        this.followup = event.name;
        return;
      case 'pause':
        this.pausedFlag = true;
        return;
      case 'resume':
        this.pausedFlag = false;
        return;
      case 'stack': {
        const next = applyJsonPatch(this.stackState, JSON.parse(event.update));
        this.stackState = Array.isArray(next) ? next : [];
        return;
      }
      case 'reminder':
      case 'cancel_reminder':
      case 'export':
      case 'agent':
      case 'flow_started':
      case 'flow_interrupted':
      case 'flow_resumed':
      case 'flow_completed':
      case 'flow_cancelled':
      case 'agent_started':
      case 'agent_completed':
      case 'agent_interrupted':
      case 'agent_resumed':
      case 'agent_cancelled':
      case 'error':
        return;
    }
  }

  private setLatestAction(action: LatestAction): void {
    this.latestActionState = action;
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

  private resetSlots(which: (def: SlotDefinition) => boolean = () => true): void {
    for (const def of this.slotDefinitions) {
      if (which(def)) this.slotValues.set(def.name, cloneJson(def.initialValue ?? null));
    }
  }

  /** Rasa `_reset`: initial state; the log is kept. */
  private reset(): void {
    this.resetSlots();
    this.pausedFlag = false;
    this.latestActionState = {};
    this.latestUser = emptyUserUttered();
    this.latestUserEntities = [];
    this.latestUserUseText = null;
    this.latestBot = null;
    this.followup = ACTION_LISTEN_NAME;
    this.loop = null;
    this.stackState = [];
  }
}
