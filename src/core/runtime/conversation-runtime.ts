import { randomUUID } from 'node:crypto';
import { type NlgServer } from 'src/core/actions/nlg-server';
import { type ActionEndpoint } from 'src/core/actions/remote-action';
import { extractSlots } from 'src/core/actions/slot-extraction';
import { CollectingOutputChannel, type OutputChannel } from 'src/core/channels/output-channel';
import { type UserMessage } from 'src/core/channels/user-message';
import { ACTION_SESSION_START_NAME } from 'src/core/domain/domain-constants';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type EncodedEvent, encodeEvent } from 'src/core/events/encoded-event';
import { type JsonObject } from 'src/core/events/event-base';
import { deserializeEvent, serializeEvent } from 'src/core/events/event-codec';
import { validateEventsPayload } from 'src/core/events/event-schema';
import { storedParseData } from 'src/core/events/json-values';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { type UserUttered } from 'src/core/events/user-uttered';
import { parseWithRegex } from 'src/core/interpreter/regex-interpreter';
import { type Clock } from 'src/core/ports/clock';
import { type HandedOverEvents, type LockLease, type LockStore } from 'src/core/ports/lock-store';
import { MessageHandler } from 'src/core/ports/message-handler';
import { NoTracing, type Tracer } from 'src/core/ports/tracer';
import { type StoreVersion, type TrackerStore } from 'src/core/ports/tracker-store';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { needsSessionStart, startSession } from 'src/core/session/session-start';
import { writeTestStories } from 'src/core/story/story-writer';
import { conversationAsTestCase, type TestCaseJson } from 'src/core/story/test-case-writer';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';
import { splitSessions } from 'src/core/tracker/sessions';
import { type AssistantSource, type LoadedAssistant } from './assistant-source';
import {
  type AddMessageCommand,
  type AppendEventsCommand,
  type ExecuteActionCommand,
  type OutputChannelName,
  type ReplaceEventsCommand,
  type StoryQuery,
  type TestCaseQuery,
  type TrackerQuery,
  type TriggerIntentCommand,
} from './commands';
import { requireConversationId } from './conversation-id';
import { type ConversationReader } from './conversation-reader';
import { type OutputChannelDirectory } from './output-channel-directory';
import { parseTextAwaitable } from './parse-text';
import {
  handOverOf,
  jsonArrayOf,
  NO_RECENT_EVENTS,
  type RecentEvents,
  withSegment,
} from './recent-events';
import { reminderChanges, setsKillableReminder } from './reminder-changes';
import { type DueReminder, firedReminderMark, isFiredMark } from './reminder-scheduler';
import {
  type CachedSession,
  estimateJsonSize,
  MEMORY_PER_JSON_CHAR,
  SessionCache,
} from './session-cache';
import { type CommittedTurn, type RuntimeLog, type TurnListener } from './turn-listener';
import { type TurnObserver } from './turn-observer';
import { requireUserText } from './user-text';

/** A tracker as the REST API answers it. */
export type TrackerState = JsonObject;

/** What a dialogue route answers: the tracker, and the bot's messages when they were collected. */
export interface TurnAnswer {
  readonly tracker: TrackerState;
  readonly messages?: JsonObject[];
}

export interface RuntimeOptions {
  /** Upper bound of actions predicted in one turn (Rasa's `MAX_NUMBER_OF_PREDICTIONS`). */
  readonly maxPredictions: number;
  /** Longest user text accepted (PARLEY_MAX_TEXT_LENGTH). */
  readonly maxTextLength: number;
  /** Conversations whose latest session is kept built, and the memory they may hold. */
  readonly cacheSize: number;
  readonly cacheBytes: number;
  /** The custom action server (endpoints.yml `action_endpoint`), if any. */
  readonly actionEndpoint: ActionEndpoint | null;
  /** The NLG server (endpoints.yml `nlg`), if any. */
  readonly nlg: NlgServer | null;
}

export interface RuntimeDependencies {
  readonly store: TrackerStore;
  readonly locks: LockStore;
  readonly clock: Clock;
  readonly assistants: AssistantSource;
  readonly outputs: OutputChannelDirectory;
  readonly listeners: readonly TurnListener[];
  readonly log: RuntimeLog;
  readonly options: RuntimeOptions;
  /** Spans of every turn (lock wait, prediction, actions); default: none. */
  readonly tracer?: Tracer;
  /** Told when each turn starts and ends (metrics); default: none. */
  readonly observer?: TurnObserver;
}

/** Work on a conversation's latest session: applies its events and returns them. */
type Produce = (
  tracker: DialogueStateTracker,
  now: number,
) => DialogueEvent[] | Promise<DialogueEvent[]>;

/** What a committed turn does after the commit. */
interface Delivery {
  /** Where the bot's messages go; decided while the turn runs (it may need the tracker). */
  output: OutputChannel | null;
  readonly effects: boolean;
  /** The channel the turn came from, for metrics and traces; default `api` (the HTTP routes). */
  readonly channel?: string;
}

/** Writes retried after another writer changed the conversation underneath us. */
const MAX_WRITE_ATTEMPTS = 5;

/**
 * The conversation runtime: every change to a conversation — a user message from any channel,
 * an injected intent, an executed action, appended or replaced events, a logged message, a
 * reminder — is one turn committed here, in one place:
 *
 * 1. take the conversation's lock (LockStore);
 * 2. load its latest session (from the session cache, else the TrackerStore);
 * 3. run the work (session start when due, NLU, the dialogue processor, custom actions);
 * 4. append the new events conditionally on the version read, retrying on a conflict — with
 *    the turn's reminder changes, in the same transaction;
 * 5. release the lock;
 * 6. tell the TurnListeners (bot messages to the output channel, reminders, …) with the
 *    committed events and their sequence numbers.
 *
 * Reads (tracker, story) share the cache. The runtime is framework-free: the Nest layer builds
 * it once (the composition root) and every route and channel calls it.
 */
export class ConversationRuntime extends MessageHandler implements ConversationReader {
  private readonly cache: SessionCache;
  /**
   * The wire form of events read from the store, so answers reuse it instead of serialising
   * every event again. Events the runtime writes are stored as JSON text straight away
   * (`encodeEvent`) and serialised again only when read.
   */
  private readonly wireForm = new WeakMap<DialogueEvent, SerializedEvent>();
  private readonly serialize = (event: DialogueEvent): SerializedEvent =>
    this.wireForm.get(event) ?? serializeEvent(event);
  private readonly store: TrackerStore;
  private readonly locks: LockStore;
  private readonly clock: Clock;
  private readonly assistants: AssistantSource;
  private readonly outputs: OutputChannelDirectory;
  private readonly listeners: readonly TurnListener[];
  private readonly log: RuntimeLog;
  private readonly options: RuntimeOptions;
  private readonly tracer: Tracer;
  private readonly observer: TurnObserver | null;

  constructor(deps: RuntimeDependencies) {
    super();
    this.store = deps.store;
    this.locks = deps.locks;
    this.clock = deps.clock;
    this.assistants = deps.assistants;
    this.outputs = deps.outputs;
    this.listeners = deps.listeners;
    this.log = deps.log;
    this.options = deps.options;
    this.tracer = deps.tracer ?? new NoTracing();
    this.observer = deps.observer ?? null;
    this.cache = new SessionCache(deps.options.cacheSize, deps.options.cacheBytes);
  }

  /** A Duckling server that fails is logged; the message is parsed on without its entities. */
  private readonly nluParseOptions = {
    onWarning: (message: string): void => this.log.warn(message),
  };

  // --- Turns -------------------------------------------------------------------------------

  /** MessageHandler: one user message end to end; the answers go to `message.output`. */
  async handleMessage(message: UserMessage): Promise<void> {
    // Every channel checks these first; this keeps a channel that does not from storing what
    // the conversation id and text rules refuse.
    requireConversationId(message.senderId, 'sender', 'body');
    if (message.text !== null) requireUserText(message.text, this.options.maxTextLength);
    const assistant = this.assistants.current();
    if (assistant === null) {
      this.log.warn('no model loaded; message ignored', { sender: message.senderId });
      return;
    }
    const text = message.text ?? '';
    const parseData = (message.parseData ??
      (await parseTextAwaitable(assistant.nlu, text, this.nluParseOptions))) as JsonObject;
    const messageId = message.messageId ?? randomUUID().replace(/-/g, '');
    const delivery: Delivery = {
      output: message.output,
      effects: true,
      channel: message.inputChannel ?? message.output.name,
    };
    await this.dialogueTurn(
      message.senderId,
      assistant,
      message.metadata ?? null,
      delivery,
      (processor, tracker) =>
        processor.handleUserMessage(
          tracker,
          {
            text: message.text,
            parseData,
            inputChannel: message.inputChannel,
            messageId,
            metadata: message.metadata ?? null,
          },
          message.output.name,
        ),
    );
  }

  /** `POST /conversations/{id}/trigger_intent`: an intent stands in for a user message. */
  async triggerIntent(command: TriggerIntentCommand): Promise<TurnAnswer> {
    const assistant = this.assistants.require();
    if (!assistant.domain.intents.includes(command.intent)) {
      throw new DialogueError(
        'DIALOGUE.UNKNOWN_INTENT',
        `The intent '${command.intent}' does not exist in the domain.`,
        { intent: command.intent },
      );
    }
    return this.answeredTurn(
      command.conversationId,
      assistant,
      command.outputChannel,
      command.verbosity,
      (p, t, channel) => p.triggerIntent(t, command.intent, command.entities, channel),
    );
  }

  /** `POST /conversations/{id}/execute`: runs the named action on an existing conversation, then the prediction loop. */
  async execute(command: ExecuteActionCommand): Promise<TurnAnswer> {
    const assistant = this.assistants.require();
    await this.requireExisting(command.conversationId);
    return this.answeredTurn(
      command.conversationId,
      assistant,
      command.outputChannel,
      command.verbosity,
      (p, t, channel) =>
        p.executeAction(t, command.action, command.policy, command.confidence, channel),
    );
  }

  /** `POST /conversations/{id}/predict`: the policies' scores for the next action (a session start is stored when due). */
  async predict(conversationId: string): Promise<JsonObject> {
    const assistant = this.assistants.require();
    await this.requireExisting(conversationId);
    const turn = await this.dialogueTurn(
      conversationId,
      assistant,
      null,
      { output: null, effects: false },
      () => undefined,
    );
    return predictionBody(
      this.processor(assistant, () => this.clock.now()),
      turn.tracker,
      true,
    );
  }

  /** `POST /model/predict`: prediction on a tracker built from the posted events; nothing is stored or run. */
  predictOn(
    tracker: DialogueStateTracker,
    assistant: LoadedAssistant,
    verbosity: EventVerbosity,
  ): JsonObject | null {
    if (!assistant.policies) return null;
    return predictionBody(
      this.processor(assistant, () => this.clock.now()),
      tracker,
      false,
      verbosity,
    );
  }

  /** `POST /conversations/{id}/tracker/events`: events appended after the stored ones (after a session start for a new conversation). */
  async appendEvents(command: AppendEventsCommand): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const raw = command.events;
    const stamped = raw.map((r) => withModelMetadata(r, assistant));
    const delivery: Delivery = { output: null, effects: command.executeSideEffects };
    if (command.executeSideEffects) {
      delivery.output =
        this.resolveOutput(command.outputChannel, null) ?? new CollectingOutputChannel();
    }
    const turn = await this.commit(
      command.conversationId,
      assistant,
      (t, now) => {
        const fresh: DialogueEvent[] = [];
        if (t.events.length === 0 && !startsWithSessionStart(raw)) {
          fresh.push(...startSession(t, assistant.domain, now, stamp(assistant)));
        }
        // Events posted without a time get one after the session start just added.
        const postedAt = after(fresh, now);
        for (const r of stamped) fresh.push(deserializeEvent(r, () => postedAt));
        for (const e of fresh) t.update(e);
        return fresh;
      },
      delivery,
    );
    return turn.tracker.currentState(command.verbosity, this.serialize);
  }

  /** `PUT /conversations/{id}/tracker/events`: the stored events become exactly the posted list, atomically. */
  async replaceEvents(command: ReplaceEventsCommand): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const id = command.conversationId;
    const turn = await this.locks.withLock(id, async (): Promise<CommittedTurn> => {
      this.cache.delete(id);
      const now = this.clock.now();
      const events = command.events.map((r) => deserializeEvent(r, () => now));
      const tracker = DialogueStateTracker.fromEvents(id, events, assistant.domain);
      await this.store.replace(id, events.map(serializeEvent));
      return {
        conversationId: id,
        kind: 'replace',
        events,
        firstSeq: 1,
        tracker,
        output: null,
        effects: false,
      };
    });
    await this.announce(turn);
    return turn.tracker.currentState(command.verbosity, this.serialize);
  }

  /** `DELETE /conversations/{id}/tracker` (Rasa Pro): deletes the conversation; 404 when it does not exist. */
  async deleteConversation(conversationId: string): Promise<void> {
    this.assistants.require();
    await this.locks.withLock(conversationId, async () => {
      this.cache.delete(conversationId);
      const deleted = await this.store.delete(conversationId);
      if (!deleted) throw conversationNotFound();
    });
  }

  /** `POST /conversations/{id}/messages`: log a user message (parsed, slots extracted) without predicting or acting. */
  async addMessage(command: AddMessageCommand): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const text = command.text;
    const messageId = command.messageId ?? randomUUID().replace(/-/g, '');
    const parseData =
      command.parseData ??
      (assistant.nlu
        ? await parseTextAwaitable(assistant.nlu, text, this.nluParseOptions)
        : parseWithRegex(text));
    const posted: Record<string, unknown> = {
      event: 'user',
      metadata: stamp(assistant),
      text,
      parse_data: {
        ...storedParseData(parseData as JsonObject),
        text,
        message_id: messageId,
      },
      input_channel: null,
      message_id: messageId,
    };
    // Given parse data must make a valid `user` event (Rasa's event schema).
    const checked = validateEventsPayload(posted);
    if (!checked.ok) throw new DialogueError('EVENTS.INVALID', checked.message);
    const user = checked.events[0] ?? posted;
    const turn = await this.commit(
      command.conversationId,
      assistant,
      (t, now) => {
        const fresh: DialogueEvent[] = [];
        const apply = (events: readonly DialogueEvent[]): void => {
          for (const e of events) {
            t.update(e);
            fresh.push(e);
          }
        };
        if (needsSessionStart(t, assistant.domain, now)) {
          apply(startSession(t, assistant.domain, now, stamp(assistant)));
        }
        const userAt = after(fresh, now);
        apply([asUserEvent(deserializeEvent({ ...user, timestamp: userAt }, () => now))]);
        // The predefined slot mappings, as the dialogue engine's action_extract_slots runs them
        // (custom mappings need the action server and belong to the message loop).
        const slots = extractSlots(assistant.domain, t, userAt + 0.001);
        apply(
          slots.map((e) =>
            deserializeEvent(withModelMetadata(serializeEvent(e), assistant), () => now),
          ),
        );
        return fresh;
      },
      { output: null, effects: false },
    );
    return turn.tracker.currentState(command.verbosity, this.serialize);
  }

  /**
   * A due reminder: its intent is triggered in the conversation, unless the user wrote since,
   * or the conversation was deleted meanwhile (a reminder must not bring it back).
   *
   * Its user event carries the reminder's mark (name, time set, due time) in its metadata, and a
   * reminder whose mark is already in the conversation does not fire again: an instance that
   * died after the turn committed but before it completed the reminder, or whose claim was
   * taken over while its turn ran, leaves the reminder to be claimed again — the turn, in one
   * commit under the conversation's lock and version check, is what says it fired.
   */
  async fireReminder(due: DueReminder): Promise<void> {
    const assistant = this.assistants.current();
    if (assistant === null) return;
    if (!(await this.store.exists(due.conversationId))) {
      this.log.info('reminder of a deleted conversation dropped', {
        sender: due.conversationId,
        intent: due.intent,
      });
      return;
    }
    const delivery: Delivery = {
      output: new CollectingOutputChannel(),
      effects: true,
      channel: 'reminder',
    };
    await this.dialogueTurn(due.conversationId, assistant, null, delivery, async (p, t) => {
      if (t.events.some((e) => e.type === 'user' && isFiredMark(e.metadata, due))) {
        this.log.info('reminder fired already; not fired again', {
          sender: due.conversationId,
          reminder: due.name,
        });
        return;
      }
      if (
        due.killOnUserMessage &&
        t.appliedEvents().some((e) => e.type === 'user' && e.timestamp > due.scheduledAt)
      ) {
        return;
      }
      if (!assistant.domain.intents.includes(due.intent)) {
        this.log.warn('reminder intent not in the domain; ignored', {
          sender: due.conversationId,
          intent: due.intent,
        });
        return;
      }
      // Rasa's `handle_reminder` answers on the output channel of the turn that set the
      // reminder (e.g. `callback` of a trigger_intent with output_channel=callback, even before
      // any user message); when that one cannot send (the REST channel's collector), on the
      // channel of the latest user message.
      const output =
        this.resolveOutput(due.outputChannel, t) ??
        this.resolveOutput('latest', t) ??
        delivery.output;
      delivery.output = output;
      await p.triggerIntent(
        t,
        due.intent,
        due.entities,
        output?.name ?? null,
        firedReminderMark(due),
      );
    });
  }

  // --- Reads -------------------------------------------------------------------------------

  /** `GET /conversations/{id}/tracker`: every stored session. Unknown conversations get a session start that is not stored. */
  async tracker(query: TrackerQuery): Promise<TrackerState> {
    const assistant = this.assistants.require();
    let tracker = await this.fullTracker(query.conversationId, assistant);
    if (tracker.events.length === 0) {
      tracker = DialogueStateTracker.fromEvents(query.conversationId, [], assistant.domain);
      for (const e of startSession(tracker, assistant.domain, this.clock.now(), stamp(assistant))) {
        tracker.update(e);
      }
    }
    if (query.until !== null) tracker = tracker.travelBackInTime(query.until);
    return tracker.currentState(query.verbosity, this.serialize);
  }

  /** ConversationReader: the tracker of every stored session, as `GET /conversations/{id}/tracker` answers it. */
  trackerState(conversationId: string, verbosity: EventVerbosity): Promise<TrackerState> {
    return this.tracker({ conversationId, verbosity, until: null });
  }

  /**
   * The latest session's state after the last `restart`, as the development inspector's
   * `tracker_stream` answers `retrieve` (Rasa's `current_state(AFTER_RESTART)` of the tracker
   * its processor loads). An unknown conversation answers an empty tracker, not stored.
   */
  async sessionState(conversationId: string): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const stored = await this.store.retrieve(conversationId, { latestSessionOnly: true });
    const tracker = this.build(conversationId, stored ?? [], assistant);
    return tracker.currentState(EventVerbosity.AFTER_RESTART, this.serialize);
  }

  /** `GET /conversations/{id}/story`: the conversation as Rasa's YAML test stories. */
  async story(query: StoryQuery): Promise<string> {
    const assistant = this.assistants.require();
    const id = query.conversationId;
    const stored = await this.store.retrieve(id, { latestSessionOnly: !query.allSessions });
    const events = this.deserialize(stored ?? []);
    let sessions = query.allSessions ? splitSessions(events) : [events];
    const until = query.until;
    if (until !== null) {
      sessions = sessions
        .map((s) => [
          ...DialogueStateTracker.fromEvents(id, s, assistant.domain).travelBackInTime(until)
            .events,
        ])
        .filter((s) => s.length > 0);
      if (sessions.length === 0) sessions = [[]];
    }
    return writeTestStories(id, sessions);
  }

  /**
   * `GET /conversations/{id}/test_case`: the latest session as one end-to-end test case named
   * after the conversation (no steps for an unknown conversation).
   */
  async testCase(query: TestCaseQuery): Promise<TestCaseJson> {
    const assistant = this.assistants.require();
    const id = query.conversationId;
    const stored = await this.store.retrieve(id, { latestSessionOnly: true });
    let tracker = DialogueStateTracker.fromEvents(
      id,
      this.deserialize(stored ?? []),
      assistant.domain,
    );
    if (query.until !== null) tracker = tracker.travelBackInTime(query.until);
    return conversationAsTestCase(tracker, id);
  }

  /** Whether the conversation has stored events. */
  exists(conversationId: string): Promise<boolean> {
    return this.store.exists(conversationId);
  }

  /** The processor of an assistant (one per turn: it carries the turn's clock). */
  processor(assistant: LoadedAssistant, now: () => number): DialogueProcessor {
    return new DialogueProcessor(assistant.domain, assistant.policies ?? null, {
      endpoint: this.options.actionEndpoint,
      nlg: this.options.nlg,
      maxPredictions: this.options.maxPredictions,
      calm: assistant.calm ?? null,
      tracer: this.tracer,
      now,
      warn: (message, data) => this.log.warn(message, data ?? {}),
    });
  }

  // --- The commit --------------------------------------------------------------------------

  /**
   * A dialogue turn: a session start when due (with the channel's session metadata), then
   * `work` on the processor. Timestamps come from a clock that never runs backwards within the
   * turn, so events keep their order.
   */
  private dialogueTurn(
    conversationId: string,
    assistant: LoadedAssistant,
    sessionMetadata: JsonObject | null,
    delivery: Delivery,
    work: (processor: DialogueProcessor, tracker: DialogueStateTracker) => Promise<void> | void,
  ): Promise<CommittedTurn> {
    return this.commit(
      conversationId,
      assistant,
      async (t, now) => {
        const start = t.events.length;
        t.modelId = assistant.modelId;
        t.assistantId = assistant.assistantId;
        let last = now;
        const tick = (): number => {
          const current = Math.max(this.clock.now(), last + 0.000001);
          last = Math.round(current * 1e6) / 1e6;
          return last;
        };
        if (needsSessionStart(t, assistant.domain, now)) {
          const events = startSession(
            t,
            assistant.domain,
            tick(),
            stamp(assistant),
            sessionMetadata,
          );
          for (const e of events) {
            t.update(e);
            last = Math.max(last, e.timestamp);
          }
        }
        await work(this.processor(assistant, tick), t);
        return t.events.slice(start);
      },
      delivery,
    );
  }

  /** A dialogue route's turn: output per `output_channel`, answered with tracker and messages. */
  private async answeredTurn(
    conversationId: string,
    assistant: LoadedAssistant,
    outputChannel: OutputChannelName,
    verbosity: EventVerbosity,
    work: (p: DialogueProcessor, t: DialogueStateTracker, channel: string | null) => Promise<void>,
  ): Promise<TurnAnswer> {
    const delivery: Delivery = { output: null, effects: true };
    const turn = await this.dialogueTurn(
      conversationId,
      assistant,
      null,
      delivery,
      async (p, t) => {
        const output = this.resolveOutput(outputChannel, t) ?? new CollectingOutputChannel();
        delivery.output = output;
        await work(p, t, output.name);
      },
    );
    const tracker = turn.tracker.currentState(verbosity);
    return turn.output instanceof CollectingOutputChannel
      ? { tracker, messages: turn.output.messages }
      : { tracker };
  }

  /**
   * The one place a conversation changes: under its lock, `produce` runs on the latest session
   * (it applies its events to the tracker and returns them), and they are stored with one
   * conditional append; on a conflict (another instance wrote) the session is reloaded and
   * `produce` runs again. The session leaves the cache while it is being changed, so readers
   * never see events that are not stored. After the lock is released, the listeners hear of
   * the committed turn.
   */
  private async commit(
    conversationId: string,
    assistant: LoadedAssistant,
    produce: Produce,
    delivery: Delivery,
  ): Promise<CommittedTurn> {
    const channel = delivery.channel ?? 'api';
    const finished = this.observer?.turnStarted({ channel });
    try {
      const turn = await this.tracer.inSpan('parley.turn', { 'parley.channel': channel }, () =>
        this.commitUnderLock(conversationId, assistant, produce, delivery),
      );
      finished?.('success');
      await this.announce(turn);
      return turn;
    } catch (error) {
      finished?.('error');
      throw error;
    }
  }

  private async commitUnderLock(
    conversationId: string,
    assistant: LoadedAssistant,
    produce: Produce,
    delivery: Delivery,
  ): Promise<CommittedTurn> {
    const waiting = this.tracer.startSpan('parley.lock.acquire', {});
    const turn = this.locks.withLock(conversationId, async (lease): Promise<CommittedTurn> => {
      waiting.end();
      for (let attempt = 1; ; attempt++) {
        const session = await this.latestSession(conversationId, assistant, attempt > 1, lease);
        this.cache.delete(conversationId);
        // Read before the work changes the tracker: whether a user message has stored
        // kill_on_user_msg reminders to delete (most conversations have none).
        const storedKillable = delivery.effects && setsKillableReminder(session.tracker.events);
        const events = await produce(session.tracker, this.clock.now());
        const encoded = events.map(encodeEvent);
        // The turn's reminder changes go in the same transaction as its events.
        const reminders = delivery.effects
          ? reminderChanges(events, {
              conversationId,
              outputChannel: delivery.output?.name ?? null,
              storedKillable,
            })
          : undefined;
        const before = session.version;
        const version = await this.store.appendIfUnchanged(
          conversationId,
          encoded,
          before,
          reminders,
        );
        if (version !== null) {
          session.version = version;
          if (this.locks.handsOverEvents()) {
            keepRecent(session, recentAfterTurn(session.recent, before, version, encoded));
            lease.leave(
              version,
              lease.passesEvents === false ? undefined : handOverOf(session.recent),
            );
          } else lease.leave(version);
          for (const e of encoded) session.bytes += e.json.length * MEMORY_PER_JSON_CHAR;
          this.cache.set(conversationId, session);
          return {
            conversationId,
            kind: 'append',
            events,
            firstSeq: version.lastSeq - events.length + 1,
            tracker: session.tracker,
            output: delivery.output,
            effects: delivery.effects,
            ...(reminders === undefined ? {} : { reminders }),
          };
        }
        if (attempt >= MAX_WRITE_ATTEMPTS) {
          // Another writer stored first every time (its lock lease ran out under this turn, or
          // the instances share no lock store): a conflict the client may retry, not a fault.
          throw new DialogueError(
            'TRACKER.WRITE_CONFLICT',
            `Conversation '${conversationId}' was changed by another writer during each of ${MAX_WRITE_ATTEMPTS} attempts; nothing of this request was stored. Retry it. Instances sharing a database need a shared lock store (LOCK_STORE=postgres or lock_store in endpoints.yml) whose lease (TICKET_LOCK_LIFETIME) outlasts a turn.`,
          );
        }
      }
    });
    // A lock that could not be taken (timeout) ends the wait too.
    return turn.finally(() => waiting.end());
  }

  /** Tells every listener, in order; a failing listener is logged and the others still run. */
  private async announce(turn: CommittedTurn): Promise<void> {
    for (const listener of this.listeners) {
      try {
        await listener.onTurnCommitted(turn);
      } catch (error) {
        this.log.error('a turn listener failed', {
          sender: turn.conversationId,
          listener: listener.constructor.name,
          error: (error as Error).message,
        });
      }
    }
  }

  /**
   * The latest session, from the cache or the store. With a lock shared by several instances, a
   * cached session is used as it is only at the version the lock's previous holder left; else
   * it is brought up to date with the events written since (one read that is also the version
   * check: behind a round-robin balancer, another instance wrote the previous turn). A turn run
   * on a stale session would be refused at the append and run again (its custom actions twice).
   */
  private async latestSession(
    conversationId: string,
    assistant: LoadedAssistant,
    reload: boolean,
    lease: LockLease,
  ): Promise<CachedSession> {
    const cached = reload ? undefined : this.cache.get(conversationId);
    if (cached !== undefined) {
      if (!this.locks.sharedAcrossProcesses()) return cached;
      const left = lease.lastVersion;
      if (left !== undefined && sameVersion(left, cached.version)) return cached;
      if (
        left !== undefined &&
        this.applyHandedOver(conversationId, cached, left, lease.lastEvents)
      ) {
        return cached;
      }
      if (cached.version === null) {
        if ((await this.store.version(conversationId)) === null) return cached;
      } else if (await this.catchUp(conversationId, cached, cached.version)) return cached;
    }
    const left = lease.lastVersion;
    if (!reload && left !== undefined && lease.lastEvents !== undefined) {
      const handed = this.sessionFromHandedOver(conversationId, assistant, left, lease.lastEvents);
      if (handed !== null) return handed;
    }
    const read = await this.store.retrieveVersioned(conversationId, { latestSessionOnly: true });
    const events = read?.events ?? [];
    return {
      tracker: this.build(conversationId, events, assistant),
      version: read?.version ?? null,
      firstSeq: read?.firstSeq ?? 1,
      bytes: estimateJsonSize(events) * MEMORY_PER_JSON_CHAR,
      recent: NO_RECENT_EVENTS,
    };
  }

  /**
   * The latest session built from the events the lock's previous holder handed over, when they
   * are the whole conversation (a conversation of a few turns, new to this instance): what a read
   * would build. null when they are not, or cannot be read.
   */
  private sessionFromHandedOver(
    conversationId: string,
    assistant: LoadedAssistant,
    left: StoreVersion,
    handed: HandedOverEvents,
  ): CachedSession | null {
    const { after, json } = handed;
    if (after.lastSeq !== 0 || after.generation !== left.generation) return null;
    const stored = parseHandedOver(json, left.lastSeq);
    if (stored === null) return null;
    // The latest session, as the store reads it: from the last session start on.
    let first = 0;
    for (let i = stored.length - 1; i > 0; i--) {
      if (isSessionStart(stored[i]!)) {
        first = i;
        break;
      }
    }
    const events = first === 0 ? stored : stored.slice(first);
    let tracker: DialogueStateTracker;
    try {
      tracker = this.build(conversationId, events, assistant);
    } catch {
      return null;
    }
    return {
      tracker,
      version: left,
      firstSeq: first + 1,
      // The built session, plus the recent events' text it keeps (as keepRecent counts it).
      bytes: estimateJsonSize(events) * MEMORY_PER_JSON_CHAR + json.length,
      recent: { segments: [{ after, json, count: stored.length }], chars: json.length },
    };
  }

  /**
   * Applies to `cached` the events stored after `at`, as a fresh read would have applied them;
   * `false` (and `cached` untouched) when it cannot: the conversation was created anew, or a
   * new session started (the cached one is no longer the latest).
   */
  private async catchUp(
    conversationId: string,
    cached: CachedSession,
    at: StoreVersion,
  ): Promise<boolean> {
    const newer = await this.store.retrieveAfter(conversationId, at);
    if (newer === null) return false;
    if (newer.events.length === 0) return true;
    if (newer.events.some(isSessionStart)) return false;
    const events = this.deserialize(newer.events);
    this.applyStored(conversationId, cached, events, newer.version, estimateJsonSize(newer.events));
    if (this.locks.handsOverEvents()) {
      const json = JSON.stringify(newer.events);
      keepRecent(
        cached,
        withSegment(cached.recent, { after: at, json, count: newer.events.length }),
      );
    }
    return true;
  }

  /**
   * Applies to `cached` the events it lacks from the recent events the lock's previous holder
   * handed over, when they reach back to its version and add up to the version handed over: a
   * catch-up without the database. `false` (and `cached` untouched) when they do not, or cannot
   * be read.
   */
  private applyHandedOver(
    conversationId: string,
    cached: CachedSession,
    left: StoreVersion,
    handed: HandedOverEvents | undefined,
  ): boolean {
    const at = cached.version;
    if (handed === undefined || at === null) return false;
    const { after, json } = handed;
    if (after.generation !== at.generation || left.generation !== at.generation) return false;
    // The events must reach back to the cached version (and past it: equal versions need none).
    if (after.lastSeq > at.lastSeq || at.lastSeq >= left.lastSeq) return false;
    const stored = parseHandedOver(json, left.lastSeq - after.lastSeq);
    if (stored === null) return false;
    const fresh = stored.slice(at.lastSeq - after.lastSeq);
    // A new session since: the cached one is no longer the latest; a read builds the new one.
    if (fresh.some(isSessionStart)) return false;
    let events: DialogueEvent[];
    try {
      events = this.deserialize(fresh);
    } catch {
      return false; // not what a Parley holder stores: the database is asked instead
    }
    this.applyStored(conversationId, cached, events, left, estimateJsonSize(fresh));
    keepRecent(cached, { segments: [{ after, json, count: stored.length }], chars: json.length });
    return true;
  }

  /** Applies stored events to a cached session, which is then at `version`. */
  private applyStored(
    conversationId: string,
    cached: CachedSession,
    events: readonly DialogueEvent[],
    version: StoreVersion,
    jsonChars: number,
  ): void {
    // Out of the cache while it changes: a failure half-way must not leave it there.
    this.cache.delete(conversationId);
    const { tracker } = cached;
    const { modelId, assistantId } = tracker;
    // Stored events are applied as stored (a fresh read stamps nothing either).
    tracker.modelId = null;
    tracker.assistantId = null;
    for (const event of events) tracker.update(event);
    tracker.modelId = modelId;
    tracker.assistantId = assistantId;
    cached.version = version;
    cached.bytes += jsonChars * MEMORY_PER_JSON_CHAR;
  }

  /**
   * Every stored event of the conversation as a tracker, for reading only (callers must not
   * update it: it may be the cached one). A cached session that covers the whole log is reused
   * after a one-row version check; otherwise the log is read and, when it is a single session,
   * cached.
   */
  private async fullTracker(
    conversationId: string,
    assistant: LoadedAssistant,
  ): Promise<DialogueStateTracker> {
    const cached = this.cache.get(conversationId);
    if (cached !== undefined && cached.firstSeq === 1 && cached.version !== null) {
      const current = await this.store.version(conversationId);
      if (sameVersion(current, cached.version)) return cached.tracker;
    }
    const read = await this.store.retrieveVersioned(conversationId);
    const tracker = this.build(conversationId, read?.events ?? [], assistant);
    if (read !== null && splitSessions(tracker.events).length <= 1) {
      this.cache.set(conversationId, {
        tracker,
        version: read.version,
        firstSeq: 1,
        bytes: estimateJsonSize(read.events) * MEMORY_PER_JSON_CHAR,
        recent: NO_RECENT_EVENTS,
      });
    }
    return tracker;
  }

  private build(
    conversationId: string,
    stored: readonly SerializedEvent[],
    assistant: LoadedAssistant,
  ): DialogueStateTracker {
    return DialogueStateTracker.fromEvents(
      conversationId,
      this.deserialize(stored),
      assistant.domain,
    );
  }

  private deserialize(stored: readonly SerializedEvent[]): DialogueEvent[] {
    const now = (): number => this.clock.now();
    return stored.map((r) => {
      const event = deserializeEvent(r, now);
      this.wireForm.set(event, r);
      return event;
    });
  }

  private async requireExisting(conversationId: string): Promise<void> {
    if (!(await this.store.exists(conversationId))) throw conversationNotFound();
  }

  /** Rasa's output channel resolution (`latest`, a registered channel name, else collect). */
  private resolveOutput(
    name: OutputChannelName,
    tracker: DialogueStateTracker | null,
  ): OutputChannel | null {
    if (name === null || name === '') return null;
    const resolved = name === 'latest' ? (tracker?.latestInputChannel ?? null) : name;
    return resolved === null ? null : this.outputs.resolve(resolved);
  }
}

function isSessionStart(event: SerializedEvent): boolean {
  return event.event === 'action' && event.name === ACTION_SESSION_START_NAME;
}

function predictionBody(
  processor: DialogueProcessor,
  tracker: DialogueStateTracker,
  sorted: boolean,
  verbosity: EventVerbosity = EventVerbosity.AFTER_RESTART,
): JsonObject {
  const prediction = processor.predict(tracker);
  if (prediction === null) {
    throw new DialogueError(
      'DIALOGUE.NO_CORE_MODEL',
      'The loaded model has no dialogue policies (NLU-only model); cannot predict the next action.',
    );
  }
  const names = processor.domain.actionNamesOrTexts;
  const scores = names.map((action, i) => ({ action, score: prediction.probabilities[i] ?? 0 }));
  if (sorted) {
    scores.sort((a, b) =>
      b.score !== a.score
        ? b.score - a.score
        : a.action < b.action
          ? -1
          : a.action > b.action
            ? 1
            : 0,
    );
  }
  return {
    scores,
    policy: prediction.policyName,
    confidence: prediction.maxConfidence,
    tracker: tracker.currentState(verbosity),
  };
}

export function conversationNotFound(): DialogueError {
  return new DialogueError('TRACKER.CONVERSATION_NOT_FOUND', 'Conversation ID not found.');
}

function stamp(assistant: LoadedAssistant): Record<string, unknown> {
  return { model_id: assistant.modelId, assistant_id: assistant.assistantId };
}

/** Adds model_id / assistant_id to a raw event's metadata unless they are already set. */
function withModelMetadata(
  raw: Record<string, unknown>,
  assistant: LoadedAssistant,
): Record<string, unknown> {
  const given = raw.metadata;
  const metadata =
    typeof given === 'object' && given !== null && !Array.isArray(given)
      ? { ...stamp(assistant), ...(given as Record<string, unknown>) }
      : stamp(assistant);
  return { ...raw, metadata };
}

/**
 * A session's recent events once a turn stored `encoded` on `before` (null: the conversation was
 * new), reaching `version`: the turn's events added as a segment when they fill the gap exactly.
 */
function recentAfterTurn(
  recent: RecentEvents,
  before: StoreVersion | null,
  version: StoreVersion,
  encoded: readonly EncodedEvent[],
): RecentEvents {
  if (encoded.length === 0) return recent;
  const after = before ?? { generation: version.generation, lastSeq: 0 };
  if (
    after.generation !== version.generation ||
    version.lastSeq !== after.lastSeq + encoded.length
  ) {
    return NO_RECENT_EVENTS;
  }
  const json = jsonArrayOf(encoded.map((e) => e.json));
  return withSegment(recent, { after, json, count: encoded.length });
}

/** Replaces a cached session's recent events, keeping its memory estimate in step. */
function keepRecent(session: CachedSession, recent: RecentEvents): void {
  session.bytes += recent.chars - session.recent.chars;
  session.recent = recent;
}

/** The stored events of a hand-over's JSON, when it is an array of `count` objects; else null. */
function parseHandedOver(json: string, count: number): SerializedEvent[] | null {
  let stored: unknown;
  try {
    stored = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(stored) || stored.length !== count) return null;
  for (const e of stored) if (typeof e !== 'object' || e === null || Array.isArray(e)) return null;
  return stored as SerializedEvent[];
}

function sameVersion(a: StoreVersion | null, b: StoreVersion | null): boolean {
  return (
    a === b ||
    (a !== null && b !== null && a.generation === b.generation && a.lastSeq === b.lastSeq)
  );
}

function startsWithSessionStart(raw: readonly Record<string, unknown>[]): boolean {
  const [a, b] = raw;
  return (
    a?.event === 'action' && a.name === 'action_session_start' && b?.event === 'session_started'
  );
}

/** A time for the next event: `now`, or just after the last of `events` if that is later. */
function after(events: readonly DialogueEvent[], now: number): number {
  const last = events[events.length - 1]?.timestamp;
  return last !== undefined && last >= now ? Math.round((last + 0.001) * 1e6) / 1e6 : now;
}

function asUserEvent(event: DialogueEvent): UserUttered {
  if (event.type !== 'user') throw new Error('expected a user event');
  return event;
}
