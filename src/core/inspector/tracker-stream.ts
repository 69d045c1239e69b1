import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { conversationIdProblem } from 'src/core/runtime/conversation-id';
import { type CommittedTurn, type RuntimeLog, TurnListener } from 'src/core/runtime/turn-listener';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

/** One open `tracker_stream` socket, as the hub sees it (the transport stays outside core). */
export interface StreamClient {
  /** Sends one text frame. */
  send(text: string): void;
  /** Closes the socket with a WebSocket close code and a short reason. */
  close(code: number, reason: string): void;
  /** Bytes queued and not yet written (a reader that does not read falls behind). */
  buffered(): number;
}

/** Reads the state `retrieve` answers: the latest session after the last restart. */
export type SessionStateReader = (conversationId: string) => Promise<JsonObject>;

/** WebSocket close codes the stream uses (RFC 6455). */
export const StreamClose = {
  /** A binary frame, or JSON that is not an object. */
  UNSUPPORTED_DATA: 1003,
  /** A text frame that is not JSON. */
  INVALID_PAYLOAD: 1007,
  /** A `sender_id` no conversation can have, or a reader too far behind. */
  POLICY_VIOLATION: 1008,
} as const;

export interface TrackerStreamLimits {
  /** Pushes of one turn at most (the last state is always among them). */
  readonly maxPushesPerTurn: number;
  /** A client with more bytes queued than this is closed instead of being sent more. */
  readonly maxBufferedBytes: number;
}

export const DEFAULT_STREAM_LIMITS: TrackerStreamLimits = {
  maxPushesPerTurn: 32,
  maxBufferedBytes: 8 * 1024 * 1024,
};

/** What the transport does with one incoming frame. */
export interface StreamConnection {
  onText(text: string): void;
  onBinary(): void;
  onClose(): void;
}

/**
 * The development inspector's `tracker_stream`, Rasa's protocol: the client sends
 * `{"action": "retrieve", "sender_id": "<id>"}` and gets that conversation's state as one JSON
 * text frame (no envelope); afterwards the state is pushed after every user message and every
 * action of that conversation. Unlike Rasa, which broadcasts every conversation to every
 * socket, a socket only receives the conversation it last retrieved.
 *
 * As a `TurnListener` it turns each committed turn into those pushes: the turn's events are
 * replayed on a copy of the session, and the state is taken after the user message and after
 * each action with the events it caused (a turn stores its events only when it ends).
 */
export class TrackerStreamHub extends TurnListener {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private reader: SessionStateReader | null = null;
  /** Open sockets that watch no conversation yet. */
  private idle = 0;

  constructor(
    private readonly log: RuntimeLog,
    private readonly limits: TrackerStreamLimits = DEFAULT_STREAM_LIMITS,
  ) {
    super();
  }

  /** Where `retrieve` reads from (set once the runtime exists: it also holds this listener). */
  attachReader(reader: SessionStateReader): void {
    this.reader = reader;
  }

  /** Sockets open now (for tests and metrics). */
  get connections(): number {
    let n = 0;
    for (const set of this.watchers.values()) n += set.size;
    return n + this.idle;
  }

  /** A new socket: frames go to the returned connection; the hub never throws at the caller. */
  connect(client: StreamClient): StreamConnection {
    const watcher = new Watcher(client);
    this.idle++;
    return {
      onText: (text) => this.onText(watcher, text),
      onBinary: () => this.refuse(watcher, StreamClose.UNSUPPORTED_DATA, 'expected JSON text'),
      onClose: () => this.drop(watcher),
    };
  }

  onTurnCommitted(turn: CommittedTurn): void {
    const set = this.watchers.get(turn.conversationId);
    if (set === undefined || set.size === 0) return;
    for (const state of this.statesOf(turn)) {
      const frame = JSON.stringify(state);
      for (const watcher of set) this.send(watcher, frame);
    }
  }

  private onText(watcher: Watcher, text: string): void {
    if (watcher.closed) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.refuse(watcher, StreamClose.INVALID_PAYLOAD, 'invalid JSON');
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.refuse(watcher, StreamClose.UNSUPPORTED_DATA, 'expected a JSON object');
      return;
    }
    const { action, sender_id: senderId } = message as Record<string, unknown>;
    if (action !== 'retrieve') {
      // Rasa logs and ignores unknown actions; so does Parley (the action is not logged: PII).
      this.log.warn('tracker_stream: unknown action; ignored', {
        action: typeof action === 'string' ? action.slice(0, 40) : typeof action,
      });
      return;
    }
    if (typeof senderId !== 'string' || senderId.length === 0) {
      this.log.warn('tracker_stream: retrieve without sender_id; ignored');
      return;
    }
    const problem = conversationIdProblem(senderId);
    if (problem !== null) {
      this.refuse(watcher, StreamClose.POLICY_VIOLATION, `sender_id ${problem.rule}`);
      return;
    }
    this.watch(watcher, senderId);
    void this.retrieve(watcher, senderId);
  }

  /** One read at a time per socket; a retrieve asked meanwhile runs after it (the latest only). */
  private async retrieve(watcher: Watcher, senderId: string): Promise<void> {
    if (watcher.reading) {
      watcher.pending = senderId;
      return;
    }
    watcher.reading = true;
    try {
      let next: string | null = senderId;
      while (next !== null && !watcher.closed) {
        watcher.pending = null;
        const state = await this.read(next);
        // A retrieve for another conversation came in meanwhile: this answer is stale.
        if (state !== null && watcher.pending === null && watcher.sender === next) {
          this.send(watcher, JSON.stringify(state));
        }
        next = watcher.pending;
      }
    } finally {
      watcher.reading = false;
    }
  }

  private async read(senderId: string): Promise<JsonObject | null> {
    if (this.reader === null) return null;
    try {
      return await this.reader(senderId);
    } catch (error) {
      // No model loaded, database unavailable: nothing to send; the page keeps waiting.
      this.log.warn('tracker_stream: could not read the conversation', {
        error: (error as Error).message,
      });
      return null;
    }
  }

  private watch(watcher: Watcher, senderId: string): void {
    if (watcher.sender === senderId) return;
    if (watcher.sender === null) this.idle--;
    else this.leave(watcher.sender, watcher);
    watcher.sender = senderId;
    let set = this.watchers.get(senderId);
    if (set === undefined) {
      set = new Set();
      this.watchers.set(senderId, set);
    }
    set.add(watcher);
  }

  private leave(senderId: string, watcher: Watcher): void {
    const set = this.watchers.get(senderId);
    set?.delete(watcher);
    if (set?.size === 0) this.watchers.delete(senderId);
  }

  private send(watcher: Watcher, frame: string): void {
    if (watcher.closed) return;
    if (watcher.client.buffered() > this.limits.maxBufferedBytes) {
      this.refuse(watcher, StreamClose.POLICY_VIOLATION, 'reader too slow');
      return;
    }
    try {
      watcher.client.send(frame);
    } catch {
      this.drop(watcher);
    }
  }

  private refuse(watcher: Watcher, code: number, reason: string): void {
    if (watcher.closed) return;
    this.drop(watcher);
    try {
      watcher.client.close(code, reason);
    } catch {
      // already gone
    }
  }

  private drop(watcher: Watcher): void {
    if (watcher.closed) return;
    watcher.closed = true;
    if (watcher.sender === null) this.idle--;
    else this.leave(watcher.sender, watcher);
    watcher.sender = null;
  }

  /**
   * The states to push for a turn: after the user message, and after each action with the
   * events that followed it, ending with the state after the turn. Replaced logs (the
   * replace-events route) push their final state only.
   */
  private statesOf(turn: CommittedTurn): JsonObject[] {
    const session = turn.tracker;
    const log = session.events;
    const last = turn.events[turn.events.length - 1];
    // Listeners run after the lock is released: a next turn may already be adding to the
    // session, so the turn's end is found by identity, not by the log's length.
    const end = last === undefined ? log.length - 1 : log.lastIndexOf(last);
    if (end < 0) return [session.currentState(EventVerbosity.AFTER_RESTART)];
    const start = turn.kind === 'replace' ? end : Math.max(0, end - turn.events.length + 1);
    const cuts: number[] = [];
    for (let i = start; i <= end; i++) {
      const following = i < end ? log[i + 1] : undefined;
      if (following === undefined || boundary(following)) cuts.push(i);
    }
    const kept = cuts.slice(-this.limits.maxPushesPerTurn);
    const copy: DialogueStateTracker = session.initCopy();
    const states: JsonObject[] = [];
    let applied = 0;
    for (const cut of kept) {
      for (; applied <= cut; applied++) copy.update(log[applied] as DialogueEvent);
      states.push(copy.currentState(EventVerbosity.AFTER_RESTART));
    }
    return states;
  }
}

/** A user message or an action starts a new step of the turn. */
function boundary(event: DialogueEvent): boolean {
  return event.type === 'user' || event.type === 'action';
}

class Watcher {
  sender: string | null = null;
  closed = false;
  reading = false;
  pending: string | null = null;

  constructor(readonly client: StreamClient) {}
}
