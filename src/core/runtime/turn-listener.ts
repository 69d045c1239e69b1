import { type OutputChannel } from 'src/core/channels/output-channel';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { type ReminderChanges } from './reminder-changes';

/** What a committed turn did to a conversation, as listeners receive it. */
export interface CommittedTurn {
  readonly conversationId: string;
  /**
   * `append`: the events were added after the stored ones; `replace`: they are now the whole log
   * (the replace-events route). Listeners see only stored events.
   */
  readonly kind: 'append' | 'replace';
  /** The events the turn stored, in order. */
  readonly events: readonly DialogueEvent[];
  /** Sequence number (1-based, in the conversation's log) of `events[0]`. */
  readonly firstSeq: number;
  /** The conversation's session after the turn; read only. */
  readonly tracker: DialogueStateTracker;
  /** Where the turn's bot messages go (a channel, or a collector for the HTTP answer). */
  readonly output: OutputChannel | null;
  /**
   * Whether the turn's side effects apply: bot messages sent to `output`, reminders scheduled.
   * False for events written through the tracker routes without `execute_side_effects`.
   */
  readonly effects: boolean;
  /**
   * The reminder changes stored with the events, in the same transaction (turns with side
   * effects; absent otherwise).
   */
  readonly reminders?: ReminderChanges;
}

/**
 * Port: told about every committed turn, after the conversation's lock is released; the
 * listeners run one after another, and the turn's caller (an HTTP answer, a channel) waits for
 * them. A listener that fails is logged and does not undo the turn.
 */
export abstract class TurnListener {
  abstract onTurnCommitted(turn: CommittedTurn): Promise<void> | void;
}

/** The runtime's log (the Nest layer passes its structured logger). */
export interface RuntimeLog {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}
