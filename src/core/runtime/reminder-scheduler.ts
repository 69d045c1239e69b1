import { type JsonObject } from 'src/core/events/event-base';
import { type CommittedTurn, type RuntimeLog, TurnListener } from './turn-listener';

export { entityList } from './reminder-store';

/** A reminder that is due: the runtime triggers its intent in the conversation. */
export interface DueReminder {
  readonly conversationId: string;
  /** Its name (Rasa's job id): with `scheduledAt`, what tells this reminder from a re-set one. */
  readonly name: string;
  /** When it is due, in milliseconds since the epoch. */
  readonly triggerAt: number;
  readonly intent: string;
  readonly entities: JsonObject[];
  /** When the reminder was set (its event's timestamp). */
  readonly scheduledAt: number;
  readonly killOnUserMessage: boolean;
  /** The output channel of the turn that set the reminder. */
  readonly outputChannel: string | null;
}

/**
 * Reminders after their turn committed. The turn's reminder changes (`reminderChanges`: its
 * `reminder` / `cancel_reminder` events and `kill_on_user_msg`) are written by the tracker store
 * with the events, in the same transaction, so a turn is never stored without its reminders nor
 * the other way round. This listener then tells the poller the trigger time of each reminder
 * set (it arms a timer for it), and logs the reminders that set nothing.
 */
export class ReminderScheduler extends TurnListener {
  private scheduled: (triggerAt: number) => void = () => undefined;

  constructor(private readonly log: RuntimeLog) {
    super();
  }

  /** Told the trigger time of each reminder stored here (the poller arms a timer for it). */
  onScheduled(wake: (triggerAt: number) => void): void {
    this.scheduled = wake;
  }

  onTurnCommitted(turn: CommittedTurn): void {
    if (!turn.effects || turn.reminders === undefined) return;
    for (const e of turn.reminders.ignored) {
      if (e.intent === null) continue;
      this.log.warn('reminder with an invalid date_time ignored', {
        sender: turn.conversationId,
        date_time: e.dateTime,
      });
    }
    for (const r of turn.reminders.schedule) this.scheduled(r.triggerAt);
  }
}

/**
 * Metadata key of the user event a fired reminder adds: `{ name, scheduled_at, date_time }` —
 * its name, its `reminder` event's timestamp and its due time, which together tell it from the
 * same name set again.
 */
export const FIRED_REMINDER = 'reminder';

/** The mark a fired reminder leaves in the metadata of its user event. */
export function firedReminderMark(due: DueReminder): JsonObject {
  return {
    [FIRED_REMINDER]: {
      name: due.name,
      scheduled_at: due.scheduledAt,
      date_time: new Date(due.triggerAt).toISOString(),
    },
  };
}

/** Whether `metadata` (of a user event) is the mark of `due` having fired. */
export function isFiredMark(metadata: Readonly<JsonObject>, due: DueReminder): boolean {
  const mark = metadata[FIRED_REMINDER] as JsonObject | undefined;
  return (
    typeof mark === 'object' &&
    mark !== null &&
    mark.name === due.name &&
    mark.scheduled_at === due.scheduledAt &&
    mark.date_time === new Date(due.triggerAt).toISOString()
  );
}
