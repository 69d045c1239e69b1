import { type JsonObject } from 'src/core/events/event-base';
import { type ReminderCancelled } from 'src/core/events/reminder-cancelled';
import { type ReminderScheduled } from 'src/core/events/reminder-scheduled';
import { type CommittedTurn, type RuntimeLog, TurnListener } from './turn-listener';

/** A reminder that is due: the runtime triggers its intent in the conversation. */
export interface DueReminder {
  readonly conversationId: string;
  readonly intent: string;
  readonly entities: JsonObject[];
  /** When the reminder was set (its event's timestamp). */
  readonly scheduledAt: number;
  readonly killOnUserMessage: boolean;
  /** The output channel of the turn that set the reminder. */
  readonly outputChannel: string | null;
}

interface Pending {
  readonly timer: NodeJS.Timeout;
  readonly intent: string;
  readonly entities: JsonObject[];
}

/** Longest delay a Node timer takes (about 24.8 days); later reminders re-arm. */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * Reminders (`reminder` / `cancel_reminder` events of committed turns with side effects) of
 * this process: each fires at its time, as Rasa's scheduler does. A reminder with the same name
 * replaces the earlier one. Pending reminders end with the process.
 */
export class ReminderScheduler extends TurnListener {
  private readonly pending = new Map<string, Pending>();
  private fire: ((due: DueReminder) => Promise<void>) | null = null;

  constructor(private readonly log: RuntimeLog) {
    super();
  }

  /** What runs a due reminder (the runtime's `fireReminder`). */
  onDue(fire: (due: DueReminder) => Promise<void>): void {
    this.fire = fire;
  }

  onTurnCommitted(turn: CommittedTurn): void {
    if (!turn.effects) return;
    for (const e of turn.events) {
      if (e.type === 'reminder') this.schedule(turn.conversationId, e, turn.output?.name ?? null);
      else if (e.type === 'cancel_reminder') this.cancel(turn.conversationId, e);
    }
  }

  /**
   * Arms `reminder`; `outputChannel` names the output channel of the turn that set it (Rasa's
   * `handle_reminder` keeps that channel), where its answer goes when it fires.
   */
  schedule(senderId: string, reminder: ReminderScheduled, outputChannel: string | null): void {
    if (reminder.intent === null) return;
    const at = Date.parse(reminder.dateTime);
    if (Number.isNaN(at)) {
      this.log.warn('reminder with an invalid date_time ignored', {
        sender: senderId,
        date_time: reminder.dateTime,
      });
      return;
    }
    const key = `${senderId}\u0000${reminder.name}`;
    this.clear(key);
    const entities = entityList(reminder.entities);
    const intent = reminder.intent;
    const due: DueReminder = {
      conversationId: senderId,
      intent,
      entities,
      scheduledAt: reminder.timestamp,
      killOnUserMessage: reminder.killOnUserMessage,
      outputChannel,
    };
    const arm = (): NodeJS.Timeout => {
      const delay = Math.max(0, at - Date.now());
      const timer = setTimeout(
        () => {
          if (at - Date.now() > 0) {
            this.pending.set(key, { timer: arm(), intent, entities });
            return;
          }
          this.pending.delete(key);
          void this.fire?.(due).catch((error: unknown) =>
            this.log.error('reminder failed', {
              sender: senderId,
              reminder: reminder.name,
              error: (error as Error).message,
            }),
          );
        },
        Math.min(delay, MAX_TIMER_MS),
      );
      timer.unref();
      return timer;
    };
    this.pending.set(key, { timer: arm(), intent, entities });
  }

  /** Cancels by name, or every reminder of the conversation matching intent (and entities). */
  cancel(senderId: string, cancel: ReminderCancelled): void {
    for (const [key, p] of this.pending) {
      const [sender, name] = key.split('\u0000');
      if (sender !== senderId) continue;
      const byName = cancel.name !== null && cancel.name === name;
      const byIntent =
        cancel.name === null &&
        (cancel.intent === null || cancel.intent === p.intent) &&
        (cancel.entities === null ||
          JSON.stringify(entityList(cancel.entities)) === JSON.stringify(p.entities));
      if (byName || byIntent) this.clear(key);
    }
  }

  /** Reminders waiting to fire. */
  get size(): number {
    return this.pending.size;
  }

  /** Drops every pending reminder (the process is stopping). */
  close(): void {
    for (const key of [...this.pending.keys()]) this.clear(key);
  }

  private clear(key: string): void {
    const p = this.pending.get(key);
    if (p) clearTimeout(p.timer);
    this.pending.delete(key);
  }
}

function entityList(value: unknown): JsonObject[] {
  if (Array.isArray(value)) {
    return value.filter((e): e is JsonObject => typeof e === 'object' && e !== null);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as JsonObject).map(([entity, v]) => ({ entity, value: v }));
  }
  return [];
}
