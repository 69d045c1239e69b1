import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { isTruthy, optionalString } from 'src/core/events/json-values';
import { isoDateTime } from 'src/core/events/wire-fields';

/** `reminder`: an intent is to be triggered at `dateTime` (a side effect; no tracker state). */
export interface ReminderScheduled extends EventBase {
  readonly type: 'reminder';
  readonly intent: string | null;
  /** ISO 8601 date and time as Python's `isoformat()` writes it. */
  readonly dateTime: string;
  readonly entities: unknown;
  /** Reminder id; reminders with the same name replace each other. */
  readonly name: string;
  readonly killOnUserMessage: boolean;
}

export function reminderScheduled(
  init: EventBaseInit & {
    readonly intent: string | null;
    readonly dateTime: string;
    readonly entities?: unknown;
    readonly name: string;
    readonly killOnUserMessage?: boolean;
  },
): ReminderScheduled {
  return {
    type: 'reminder',
    ...eventBase(init),
    intent: init.intent,
    dateTime: init.dateTime,
    entities: init.entities ?? null,
    name: init.name,
    killOnUserMessage: init.killOnUserMessage ?? true,
  };
}

export const REMINDER_SCHEDULED_KIND = defineEvent<ReminderScheduled>({
  type: 'reminder',
  decode: (raw, base, newId) =>
    reminderScheduled({
      ...base,
      intent: optionalString(raw.intent),
      dateTime: isoDateTime(raw.date_time, raw),
      entities: raw.entities ?? null,
      name: optionalString(raw.name) ?? newId(),
      killOnUserMessage: raw.kill_on_user_msg === undefined ? true : isTruthy(raw.kill_on_user_msg),
    }),
  encode: (e, d) => {
    d.intent = e.intent;
    d.date_time = e.dateTime;
    d.entities = e.entities;
    d.name = e.name;
    d.kill_on_user_msg = e.killOnUserMessage;
  },
  example: {
    event: 'reminder',
    timestamp: 1700000000.5,
    intent: 'remind',
    date_time: '2018-09-03T11:41:10.128172+00:00',
    entities: null,
    name: 'my_reminder',
    kill_on_user_msg: true,
  },
});
