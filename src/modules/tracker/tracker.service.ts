import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  Clock,
  deserializeEvent,
  DialogueError,
  type DialogueEvent,
  DialogueStateTracker,
  type EventVerbosity,
  extractSlotEvents,
  LockStore,
  needsSessionStart,
  parseWithRegex,
  type SerializedEvent,
  serializeEvent,
  splitSessions,
  startSession,
  TrackerStore,
  type UserUttered,
  validateEventsPayload,
  writeTestStories,
} from 'src/core';
import { AssistantRegistry, type LoadedAssistant } from 'src/modules/assistant/assistant.registry';
import { verbosityParam } from './query-params';

export type TrackerState = Record<string, unknown>;

/**
 * The tracker operations of the REST API (Rasa's operations 3–7 and 11): reads and writes of a
 * conversation's event log, each write under the conversation's lock.
 */
@Injectable()
export class TrackerService {
  constructor(
    private readonly store: TrackerStore,
    private readonly locks: LockStore,
    private readonly clock: Clock,
    private readonly assistants: AssistantRegistry,
  ) {}

  /** Op 3. Unknown conversations get a session start in memory, which is not stored. */
  async getTracker(
    conversationId: string,
    verbosity: EventVerbosity,
    until: number | null,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const stored = await this.store.retrieve(conversationId);
    let tracker = this.build(conversationId, stored ?? [], assistant);
    if (tracker.events.length === 0) {
      for (const e of startSession(
        tracker,
        assistant.domain,
        this.clock.now(),
        this.stamp(assistant),
      )) {
        tracker.update(e);
      }
    }
    if (until !== null) tracker = tracker.travelBackInTime(until);
    return tracker.currentState(verbosity);
  }

  /** Op 5: validated events are appended after the stored ones (after a session start for a new conversation). */
  async appendEvents(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
  ): Promise<TrackerState> {
    const assistant = this.assistants.require();
    const raw = this.validated(body);
    const verbosity = verbosityParam(includeEvents);
    return this.locks.withLock(conversationId, async () => {
      const now = this.clock.now();
      const stored = await this.store.retrieve(conversationId, { latestSessionOnly: true });
      const tracker = this.build(conversationId, stored ?? [], assistant);
      const fresh: DialogueEvent[] = [];
      if (tracker.events.length === 0 && !startsWithSessionStart(raw)) {
        fresh.push(...startSession(tracker, assistant.domain, now, this.stamp(assistant)));
      }
      // Events posted without a time get one after the session start just added.
      const postedAt = after(fresh, now);
      for (const r of raw)
        {fresh.push(
          this.withModelMetadata(
            deserializeEvent(r, () => postedAt),
            assistant,
          ),
        );}
      for (const e of fresh) tracker.update(e);
      await this.store.append(conversationId, fresh.map(serializeEvent));
      return tracker.currentState(verbosity);
    });
  }

  /** Op 6: the stored events become exactly the posted list, atomically. */
  async replaceEvents(
    conversationId: string,
    body: unknown,
    includeEvents: unknown,
  ): Promise<TrackerState> {
    this.assistants.require();
    if (body !== undefined && !Array.isArray(body)) {
      throw new DialogueError(
        'EVENTS.INVALID',
        'Failed to validate the events format. For more information about the format visit the docs. Error: the body of a replace must be a list of events.',
      );
    }
    const assistant = this.assistants.require();
    const raw = this.validated(body);
    const verbosity = verbosityParam(includeEvents);
    return this.locks.withLock(conversationId, async () => {
      const now = this.clock.now();
      const events = raw.map((r) => deserializeEvent(r, () => now));
      const tracker = DialogueStateTracker.fromEvents(conversationId, events, assistant.domain);
      await this.store.replace(conversationId, events.map(serializeEvent));
      return tracker.currentState(verbosity);
    });
  }

  /** Op 4 (Rasa Pro): 404 for an unknown conversation. */
  async deleteTracker(conversationId: string): Promise<void> {
    this.assistants.require();
    await this.locks.withLock(conversationId, async () => {
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
    const events = (stored ?? []).map((r) => deserializeEvent(r, () => this.clock.now()));
    let sessions = allSessions ? splitSessions(events) : [events];
    if (until !== null) {
      sessions = sessions
        .map(
          (s) =>
            DialogueStateTracker.fromEvents(conversationId, s, assistant.domain).travelBackInTime(
              until,
            ).events,
        )
        .map((s) => [...s])
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
    this.assistants.require();
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
    const assistant = this.assistants.require();
    return this.locks.withLock(conversationId, async () => {
      const now = this.clock.now();
      const stored = await this.store.retrieve(conversationId, { latestSessionOnly: true });
      const tracker = this.build(conversationId, stored ?? [], assistant);
      const fresh: DialogueEvent[] = [];
      const apply = (events: readonly DialogueEvent[]): void => {
        for (const e of events) {
          tracker.update(e);
          fresh.push(e);
        }
      };
      if (needsSessionStart(tracker, assistant.domain, now)) {
        apply(startSession(tracker, assistant.domain, now, this.stamp(assistant)));
      }
      const parseData = message.parse_data ?? parseWithRegex(message.text);
      const messageId = randomUUID().replace(/-/g, '');
      const userAt = after(fresh, now);
      const rawUser = {
        event: 'user',
        timestamp: userAt,
        metadata: this.stamp(assistant),
        text: message.text,
        parse_data: { ...parseData, text: message.text, message_id: messageId },
        input_channel: null,
        message_id: messageId,
      };
      const user = userUttered(this.validated(rawUser)[0] ?? rawUser, now);
      apply([user]);
      apply(
        extractSlotEvents(assistant.domain, {
          message: user,
          slotValue: (name) => tracker.getSlot(name),
          activeLoop: tracker.activeLoop?.name ?? null,
          now: userAt + 0.001,
        }).map((e) => this.withModelMetadata(e, assistant)),
      );
      await this.store.append(conversationId, fresh.map(serializeEvent));
      return tracker.currentState(verbosity);
    });
  }

  private build(
    conversationId: string,
    stored: readonly SerializedEvent[],
    assistant: LoadedAssistant,
  ): DialogueStateTracker {
    const events = stored.map((r) => deserializeEvent(r, () => this.clock.now()));
    return DialogueStateTracker.fromEvents(conversationId, events, assistant.domain);
  }

  private validated(body: unknown): Record<string, unknown>[] {
    const result = validateEventsPayload(body);
    if (!result.ok) throw new DialogueError('EVENTS.INVALID', result.message);
    return result.events;
  }

  private stamp(assistant: LoadedAssistant): Record<string, unknown> {
    return { model_id: assistant.modelId, assistant_id: assistant.assistantId };
  }

  /** Adds model_id / assistant_id to the event's metadata unless they are already set. */
  private withModelMetadata(event: DialogueEvent, assistant: LoadedAssistant): DialogueEvent {
    const raw = serializeEvent(event);
    const metadata = {
      ...this.stamp(assistant),
      ...((raw.metadata as Record<string, unknown> | undefined) ?? {}),
    };
    return deserializeEvent({ ...raw, metadata }, () => this.clock.now());
  }
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
  return last !== undefined && last >= now ? last + 0.001 : now;
}

function userUttered(raw: Record<string, unknown>, now: number): UserUttered {
  const event = deserializeEvent(raw, () => now);
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
      {
        parameter: 'body',
        in: 'body',
      },
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
