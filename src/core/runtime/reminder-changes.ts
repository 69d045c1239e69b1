import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type ReminderScheduled } from 'src/core/events/reminder-scheduled';
import { cancels, entityList, type ReminderMatch, type ReminderRecord } from './reminder-store';

/**
 * What a turn's new events do to the conversation's stored reminders, reduced to one set of
 * deletions and one set of writes that a store applies together, in the same transaction as the
 * events (so neither can be stored without the other):
 *
 * - `cancel`: the stored reminders to delete — those matching a `cancel_reminder` (by name, or by
 *   intent and entities), a reminder set and cancelled again within the turn (by name), and, for
 *   `killedBefore`, every `kill_on_user_msg` reminder set before a user message of the turn;
 * - `schedule`: the reminders the turn leaves set, one per name (the last one set), replacing
 *   stored ones of the same name. A cancellation never deletes a name being scheduled: the write
 *   replaces that row anyway, and one statement must not change a row twice.
 *
 * Applying `cancel` (minus the scheduled names) and then `schedule` leaves the store as applying
 * the events one by one would.
 */
export interface ReminderChanges {
  readonly schedule: readonly ReminderRecord[];
  readonly cancel: readonly ReminderMatch[];
  /**
   * The timestamp of the turn's latest user message: stored `kill_on_user_msg` reminders set
   * before it (`scheduledAt` < it) are cancelled. `null`: the turn has no user message (or no
   * stored reminder can wait on one: `ReminderTurn.storedKillable`).
   */
  readonly killedBefore: number | null;
  /** Reminder events that set nothing: no intent, or a `date_time` that is no date. */
  readonly ignored: readonly ReminderScheduled[];
}

/** Where the turn's reminders belong. */
export interface ReminderTurn {
  readonly conversationId: string;
  /** The output channel of the turn that sets them: where their answers go when they fire. */
  readonly outputChannel: string | null;
  /**
   * Whether a stored reminder may wait on a user message (`kill_on_user_msg`; default true).
   * False spares a turn's user message the deletion when the conversation read holds no such
   * reminder (`setsKillableReminder`); one set beyond what was read is still skipped when it
   * comes due.
   */
  readonly storedKillable?: boolean;
}

/** Whether `events` set a reminder that a later user message cancels (`kill_on_user_msg`). */
export function setsKillableReminder(events: readonly DialogueEvent[]): boolean {
  return events.some((e) => e.type === 'reminder' && e.killOnUserMessage);
}

/** No changes at all. */
export const NO_REMINDER_CHANGES: ReminderChanges = {
  schedule: [],
  cancel: [],
  killedBefore: null,
  ignored: [],
};

/** Whether `changes` write or delete nothing. */
export function noReminderChanges(changes: ReminderChanges): boolean {
  return (
    changes.schedule.length === 0 && changes.cancel.length === 0 && changes.killedBefore === null
  );
}

/**
 * The reminder changes of a turn's new events (Rasa's `reminder` / `cancel_reminder` side
 * effects, and `kill_on_user_msg`), in event order. Pure: the caller decides whether the turn
 * has side effects at all.
 */
export function reminderChanges(
  events: readonly DialogueEvent[],
  turn: ReminderTurn,
): ReminderChanges {
  const set = new Map<string, ReminderRecord>();
  const cancel: ReminderMatch[] = [];
  const ignored: ReminderScheduled[] = [];
  let killedBefore: number | null = null;
  const drop = (gone: (r: ReminderRecord) => boolean): void => {
    for (const [name, r] of set) {
      if (!gone(r)) continue;
      set.delete(name);
      // It replaced any stored reminder of its name: that one is gone with it.
      cancel.push({ name });
    }
  };
  for (const e of events) {
    if (e.type === 'reminder') {
      const record = reminderRecord(e, turn);
      if (record === null) ignored.push(e);
      else {
        set.delete(record.name); // re-set: it moves to the end, as a new reminder
        set.set(record.name, record);
      }
    } else if (e.type === 'cancel_reminder') {
      const match: ReminderMatch =
        e.name !== null
          ? { name: e.name }
          : {
              name: null,
              intent: e.intent,
              entities: e.entities === null ? null : entityList(e.entities),
            };
      cancel.push(match);
      drop((r) => cancels(match, r));
    } else if (e.type === 'user') {
      if (turn.storedKillable !== false) {
        killedBefore = Math.max(killedBefore ?? e.timestamp, e.timestamp);
      }
      const at = e.timestamp;
      drop((r) => r.killOnUserMessage && r.scheduledAt < at);
    }
  }
  return { schedule: [...set.values()], cancel: dedupe(cancel), killedBefore, ignored };
}

/** The stored form of a `reminder` event; `null` when it sets nothing (no intent, no date). */
export function reminderRecord(e: ReminderScheduled, turn: ReminderTurn): ReminderRecord | null {
  if (e.intent === null) return null;
  const at = Date.parse(e.dateTime);
  if (Number.isNaN(at)) return null;
  return {
    conversationId: turn.conversationId,
    name: e.name,
    intent: e.intent,
    entities: entityList(e.entities),
    triggerAt: at,
    killOnUserMessage: e.killOnUserMessage,
    scheduledAt: e.timestamp,
    outputChannel: turn.outputChannel,
  };
}

/** Cancellations by name once each (a name set and cancelled twice needs one delete). */
function dedupe(matches: ReminderMatch[]): ReminderMatch[] {
  const names = new Set<string>();
  return matches.filter((m) => {
    if (m.name === null) return true;
    if (names.has(m.name)) return false;
    names.add(m.name);
    return true;
  });
}
