import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
