import { type JsonObject } from 'src/core/events/event-base';
import { type ReminderCancelled } from 'src/core/events/reminder-cancelled';
import { type ReminderScheduled } from 'src/core/events/reminder-scheduled';
import { type ReminderMatch, type ReminderStore } from './reminder-store';
import { type CommittedTurn, type RuntimeLog, TurnListener } from './turn-listener';

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
 * Reminders (`reminder` / `cancel_reminder` events of committed turns with side effects): each
 * is written to the ReminderStore once its turn committed, and cancels delete the matching
 * stored reminders — of any instance. The ReminderPoller fires them. A reminder with the same
 * name replaces the conversation's earlier one. A process that dies between the commit and the
 * write loses that turn's reminders (the turn's caller waits for the write).
 */
export class ReminderScheduler extends TurnListener {
  private scheduled: (triggerAt: number) => void = () => undefined;

  constructor(
    private readonly store: ReminderStore,
    private readonly log: RuntimeLog,
  ) {
    super();
  }

  /** Told the trigger time of each reminder stored here (the poller arms a timer for it). */
  onScheduled(wake: (triggerAt: number) => void): void {
    this.scheduled = wake;
  }

  async onTurnCommitted(turn: CommittedTurn): Promise<void> {
    if (!turn.effects) return;
    for (const e of turn.events) {
      if (e.type === 'reminder') {
        await this.schedule(turn.conversationId, e, turn.output?.name ?? null);
      } else if (e.type === 'cancel_reminder') {
        await this.cancel(turn.conversationId, e);
      }
    }
  }

  /**
   * Stores `reminder`; `outputChannel` names the output channel of the turn that set it (Rasa's
   * `handle_reminder` keeps that channel), where its answer goes when it fires.
   */
  async schedule(
    senderId: string,
    reminder: ReminderScheduled,
    outputChannel: string | null,
  ): Promise<void> {
    if (reminder.intent === null) return;
    const at = Date.parse(reminder.dateTime);
    if (Number.isNaN(at)) {
      this.log.warn('reminder with an invalid date_time ignored', {
        sender: senderId,
        date_time: reminder.dateTime,
      });
      return;
    }
    await this.store.schedule({
      conversationId: senderId,
      name: reminder.name,
      intent: reminder.intent,
      entities: entityList(reminder.entities),
      triggerAt: at,
      killOnUserMessage: reminder.killOnUserMessage,
      scheduledAt: reminder.timestamp,
      outputChannel,
    });
    this.scheduled(at);
  }

  /** Cancels by name, or every reminder of the conversation matching intent (and entities). */
  async cancel(senderId: string, cancel: ReminderCancelled): Promise<void> {
    const match: ReminderMatch =
      cancel.name !== null
        ? { name: cancel.name }
        : {
            name: null,
            intent: cancel.intent,
            entities: cancel.entities === null ? null : entityList(cancel.entities),
          };
    await this.store.cancel(senderId, match);
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

/** Rasa's entities of a reminder: a list of `{entity, value}`, or a `{name: value}` object. */
export function entityList(value: unknown): JsonObject[] {
  if (Array.isArray(value)) {
    return value.filter((e): e is JsonObject => typeof e === 'object' && e !== null);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as JsonObject).map(([entity, v]) => ({ entity, value: v }));
  }
  return [];
}
