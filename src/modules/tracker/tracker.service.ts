import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  AssistantSource,
  Clock,
  ConversationReader,
  deserializeEvent,
  DialogueError,
  type DialogueEvent,
  DialogueStateTracker,
  encodeEvent,
  EventVerbosity,
  extractSlots,
  type JsonObject,
  type LoadedAssistant,
  LockStore,
  needsSessionStart,
  parseWithRegex,
  requireUserEventTexts,
  requireUserText,
  type SerializedEvent,
  serializeEvent,
  splitSessions,
  startSession,
  storedParseData,
  type StoreVersion,
  TrackerStore,
  type UserUttered,
  validateEventsPayload,
  writeTestStories,
} from 'src/core';
import { parseText } from 'src/modules/model';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { verbosityParam } from './query-params';
import {
  type CachedSession,
  estimateJsonSize,
  MEMORY_PER_JSON_CHAR,
  SessionCache,
} from './session-cache';

export type TrackerState = Record<string, unknown>;

/** Writes retried after another writer changed the conversation underneath us. */
const MAX_WRITE_ATTEMPTS = 5;

/**
 * The tracker operations of the REST API (Rasa's operations 3–7 and 11). Writes run under the
 * conversation's lock on the latest session, kept built in a cache; each write is one
 * conditional append, so a cache that another instance made stale is detected and reloaded.
 */
@Injectable()
export class TrackerService extends ConversationReader {
  private readonly cache: SessionCache;
  private readonly maxTextLength: number;
  /**
   * The wire form of events read from the store, so responses reuse it instead of serialising
   * every event again. Entries go with their events. Events the message loop writes are stored
   * as JSON text straight away (`encodeEvent`) and serialised again only if read.
   */
  private readonly wireForm = new WeakMap<DialogueEvent, SerializedEvent>();
  private readonly serialize = (event: DialogueEvent): SerializedEvent =>
    this.wireForm.get(event) ?? serializeEvent(event);

  constructor(
    private readonly store: TrackerStore,
    private readonly locks: LockStore,
    private readonly clock: Clock,
    private readonly assistants: AssistantSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.cache = new SessionCache(config.trackerCacheSize, config.trackerCacheBytes);
    this.maxTextLength = config.http.maxTextLength;
  }

  /** Op 3: every stored session. Unknown conversations get a session start that is not stored. */
  async getTracker(
    conversationId: string,
    includeEvents: unknown,
    until: number | null,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const verbosity = verbosityParam(includeEvents);
    let tracker = await this.fullTracker(conversationId, assistant);
    if (tracker.events.length === 0) {
      tracker = DialogueStateTracker.fromEvents(conversationId, [], assistant.domain);
      const now = this.clock.now();
      for (const e of startSession(tracker, assistant.domain, now, this.stamp(assistant))) {
        tracker.update(e);
      }
    }
    if (until !== null) tracker = tracker.travelBackInTime(until);
    return tracker.currentState(verbosity, this.serialize);
  }

  /** ConversationReader: the tracker of every stored session, as op 3 answers it. */
  trackerState(conversationId: string, verbosity: EventVerbosity): Promise<TrackerState> {
    return this.getTracker(conversationId, verbosity, null);
  }

  /** Op 5: events appended after the stored ones (after a session start for a new conversation). */
  async appendEvents(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const raw = this.validated(body);
    const verbosity = verbosityParam(includeEvents);
    const stamped = raw.map((r) => this.withModelMetadata(r, assistant));
    const tracker = await this.write(conversationId, assistant, (t, now) => {
      const fresh: DialogueEvent[] = [];
      if (t.events.length === 0 && !startsWithSessionStart(raw)) {
        fresh.push(...startSession(t, assistant.domain, now, this.stamp(assistant)));
      }
      // Events posted without a time get one after the session start just added.
      const postedAt = after(fresh, now);
      for (const r of stamped) fresh.push(deserializeEvent(r, () => postedAt));
      for (const e of fresh) t.update(e);
      return fresh;
    });
    return tracker.currentState(verbosity, this.serialize);
  }

  /** Op 6: the stored events become exactly the posted list, atomically. */
  async replaceEvents(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    if (body !== undefined && !Array.isArray(body)) {
      throw new DialogueError(
        'EVENTS.INVALID',
        'Failed to validate the events format. For more information about the format visit the docs. Error: the body of a replace must be a list of events.',
      );
    }
    const raw = this.validated(body);
    const verbosity = verbosityParam(includeEvents);
    return this.locks.withLock(conversationId, async () => {
      this.cache.delete(conversationId);
      const now = this.clock.now();
      const events = raw.map((r) => deserializeEvent(r, () => now));
      const tracker = DialogueStateTracker.fromEvents(conversationId, events, assistant.domain);
      await this.store.replace(conversationId, events.map(serializeEvent));
      return tracker.currentState(verbosity, this.serialize);
    });
  }

  /** Op 4 (Rasa Pro): 204, or 404 for an unknown conversation. */
  async deleteTracker(conversationId: string): Promise<void> {
    this.assistants.require();
    await this.locks.withLock(conversationId, async () => {
      this.cache.delete(conversationId);
      const deleted = await this.store.delete(conversationId);
      if (!deleted) throw conversationNotFound();
    });
  }

  /** Op 7: the conversation as Rasa's YAML test stories. */
  async getStory(
    conversationId: string,
    until: number | null,
    allSessions: boolean,
  ): Promise<string> {
    const assistant = this.assistants.require();
    const stored = await this.store.retrieve(conversationId, { latestSessionOnly: !allSessions });
    const events = this.deserialize(stored ?? []);
    let sessions = allSessions ? splitSessions(events) : [events];
    if (until !== null) {
      sessions = sessions
        .map((s) => [
          ...DialogueStateTracker.fromEvents(conversationId, s, assistant.domain).travelBackInTime(
            until,
          ).events,
        ])
        .filter((s) => s.length > 0);
      if (sessions.length === 0) sessions = [[]];
    }
    return writeTestStories(conversationId, sessions);
  }

  /** Op 11: log a user message (parsed, slots extracted) without predicting or acting. */
  async addMessage(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    if (
      body === undefined ||
      body === null ||
      (typeof body === 'object' && Object.keys(body).length === 0)
    ) {
      throw new DialogueError(
        'REQUEST.BODY_MISSING',
        'No message defined in request body. Add a message to the request body in order to add it to the tracker.',
      );
    }
    const verbosity = verbosityParam(includeEvents);
    const message = messageBody(body);
    requireUserText(message.text, this.maxTextLength);
    const messageId = randomUUID().replace(/-/g, '');
    const parseData =
      message.parse_data ??
      (assistant.nlu ? parseText(assistant.nlu, message.text) : parseWithRegex(message.text));
    const rawUser: Record<string, unknown> = {
      event: 'user',
      metadata: this.stamp(assistant),
      text: message.text,
      parse_data: {
        ...storedParseData(parseData as JsonObject),
        text: message.text,
        message_id: messageId,
      },
      input_channel: null,
      message_id: messageId,
    };
    const validUser = this.validated(rawUser)[0] ?? rawUser;
    const tracker = await this.write(conversationId, assistant, (t, now) => {
      const fresh: DialogueEvent[] = [];
      const apply = (events: readonly DialogueEvent[]): void => {
        for (const e of events) {
          t.update(e);
          fresh.push(e);
        }
      };
      if (needsSessionStart(t, assistant.domain, now)) {
        apply(startSession(t, assistant.domain, now, this.stamp(assistant)));
      }
      const userAt = after(fresh, now);
      const user = asUserEvent(deserializeEvent({ ...validUser, timestamp: userAt }, () => now));
      apply([user]);
      // The predefined slot mappings, as the dialogue engine's action_extract_slots runs them
      // (custom mappings need the action server and belong to the message loop).
      const slots = extractSlots(assistant.domain, t, userAt + 0.001);
      apply(
        slots.map((e) =>
          deserializeEvent(this.withModelMetadata(serializeEvent(e), assistant), () => now),
        ),
      );
      return fresh;
    });
    return tracker.currentState(verbosity, this.serialize);
  }

  /**
   * Runs `produce` on the conversation's latest session under its lock — it applies its events
   * to the tracker and returns them — and stores them with one conditional append. The cached session is taken out of the cache while it
   * is being changed, so readers never see events that are not stored yet.
   */
  /**
   * For the dialogue engine: runs `produce` (which may await, e.g. a custom action server) on
   * the conversation's latest session under its lock, and stores the events it returns with one
   * conditional append, as `write` does for the tracker routes.
   */
  transact(
    conversationId: string,
    assistant: LoadedAssistant,
    produce: (tracker: DialogueStateTracker, now: number) => Promise<DialogueEvent[]>,
  ): Promise<DialogueStateTracker> {
    return this.write(conversationId, assistant, produce);
  }

  /** Whether the conversation has stored events. */
  exists(conversationId: string): Promise<boolean> {
    return this.store.exists(conversationId);
  }

  private write(
    conversationId: string,
    assistant: LoadedAssistant,
    produce: (
      tracker: DialogueStateTracker,
      now: number,
    ) => DialogueEvent[] | Promise<DialogueEvent[]>,
  ): Promise<DialogueStateTracker> {
    return this.locks.withLock(conversationId, async () => {
      for (let attempt = 1; ; attempt++) {
        const session = await this.latestSession(conversationId, assistant, attempt > 1);
        this.cache.delete(conversationId);
        const events = await produce(session.tracker, this.clock.now());
        const encoded = events.map(encodeEvent);
        const version = await this.store.appendIfUnchanged(
          conversationId,
          encoded,
          session.version,
        );
        if (version !== null) {
          session.version = version;
          for (const e of encoded) session.bytes += e.json.length * MEMORY_PER_JSON_CHAR;
          this.cache.set(conversationId, session);
          return session.tracker;
        }
        if (attempt >= MAX_WRITE_ATTEMPTS) {
          throw new DialogueError(
            'TRACKER.CONVERSATION_ERROR',
            `Conversation '${conversationId}' kept changing under concurrent writers; the events were not stored. Use LOCK_STORE=postgres when several instances share a database.`,
          );
        }
      }
    });
  }

  /** The latest session, from the cache or the store. */
  private async latestSession(
    conversationId: string,
    assistant: LoadedAssistant,
    reload: boolean,
  ): Promise<CachedSession> {
    const cached = reload ? undefined : this.cache.get(conversationId);
    if (cached !== undefined) return cached;
    const read = await this.store.retrieveVersioned(conversationId, { latestSessionOnly: true });
    const events = read?.events ?? [];
    return {
      tracker: this.build(conversationId, events, assistant),
      version: read?.version ?? null,
      firstSeq: read?.firstSeq ?? 1,
      bytes: estimateJsonSize(events) * MEMORY_PER_JSON_CHAR,
    };
  }

  /**
   * Every stored event of the conversation as a tracker, for reading only (callers must not
   * update it: it may be the cached one). A cached session that covers the whole log is reused
   * after a one-row version check; otherwise the log is read and, when it is a single session,
   * cached. Never empty when it comes from the store.
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

  private validated(body: unknown): Record<string, unknown>[] {
    const result = validateEventsPayload(body);
    if (!result.ok) throw new DialogueError('EVENTS.INVALID', result.message);
    requireUserEventTexts(result.events, this.maxTextLength);
    return result.events;
  }

  private stamp(assistant: LoadedAssistant): Record<string, unknown> {
    return { model_id: assistant.modelId, assistant_id: assistant.assistantId };
  }

  /** Adds model_id / assistant_id to a raw event's metadata unless they are already set. */
  private withModelMetadata(
    raw: Record<string, unknown>,
    assistant: LoadedAssistant,
  ): Record<string, unknown> {
    const given = raw.metadata;
    const metadata =
      typeof given === 'object' && given !== null && !Array.isArray(given)
        ? { ...this.stamp(assistant), ...(given as Record<string, unknown>) }
        : this.stamp(assistant);
    return { ...raw, metadata };
  }
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

export function conversationNotFound(): DialogueError {
  return new DialogueError('TRACKER.CONVERSATION_NOT_FOUND', 'Conversation ID not found.');
}

interface MessageBody {
  text: string;
  parse_data?: Record<string, unknown>;
}

function messageBody(body: unknown): MessageBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      'The request body must be a JSON object with "text" and "sender".',
      { parameter: 'body', in: 'body' },
    );
  }
  const b = body as Record<string, unknown>;
  if (b.sender !== 'user') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `Currently, only user messages can be passed to this endpoint. Messages of sender '${String(b.sender)}' cannot be handled.`,
      { parameter: 'sender', in: 'body' },
    );
  }
  if (typeof b.text !== 'string') {
    throw new DialogueError('REQUEST.INVALID_PARAMETER', 'The message "text" must be a string.', {
      parameter: 'text',
      in: 'body',
    });
  }
  if (
    b.parse_data !== undefined &&
    (typeof b.parse_data !== 'object' || b.parse_data === null || Array.isArray(b.parse_data))
  ) {
    throw new DialogueError('REQUEST.INVALID_PARAMETER', '"parse_data" must be an object.', {
      parameter: 'parse_data',
      in: 'body',
    });
  }
  return { text: b.text, parse_data: b.parse_data as Record<string, unknown> | undefined };
}
