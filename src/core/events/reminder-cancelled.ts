import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalString } from 'src/core/events/json-values';

/**
 * `cancel_reminder`: cancels the reminders matching name, intent and entities (all of them when
 * none is given). As in Rasa, these fields are read but never serialised.
 */
export interface ReminderCancelled extends EventBase {
  readonly type: 'cancel_reminder';
  readonly name: string | null;
  readonly intent: string | null;
  readonly entities: unknown;
}

export function reminderCancelled(
  init: EventBaseInit & {
    readonly name?: string | null;
    readonly intent?: string | null;
    readonly entities?: unknown;
  },
): ReminderCancelled {
  return {
    type: 'cancel_reminder',
    ...eventBase(init),
    name: init.name ?? null,
    intent: init.intent ?? null,
    entities: init.entities ?? null,
  };
}

export const REMINDER_CANCELLED_KIND = defineEvent<ReminderCancelled>({
  type: 'cancel_reminder',
  decode: (raw, base) =>
    reminderCancelled({
      ...base,
      name: optionalString(raw.name),
      intent: optionalString(raw.intent),
      entities: raw.entities ?? null,
    }),
  example: { event: 'cancel_reminder', timestamp: 1700000000.5 },
});
