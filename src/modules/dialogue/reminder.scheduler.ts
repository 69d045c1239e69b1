import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { type JsonObject, type ReminderCancelled, type ReminderScheduled } from 'src/core';

type FireHandler = (
  senderId: string,
  intent: string,
  entities: JsonObject[],
  scheduledAt: number,
  killOnUserMessage: boolean,
  outputChannel: string | null,
) => Promise<void>;

interface Pending {
  readonly timer: NodeJS.Timeout;
  readonly intent: string;
  readonly entities: JsonObject[];
}

/** Longest delay a Node timer takes (about 24.8 days); later reminders re-arm. */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * Reminders (`reminder` / `cancel_reminder` events) of this server process: each fires at its
 * time by triggering its intent in the conversation, as Rasa's scheduler does. A reminder
 * with the same name replaces the earlier one; `kill_on_user_msg` reminders are skipped when the
 * user wrote after they were set. Pending reminders end with the process.
 */
@Injectable()
export class ReminderScheduler implements OnModuleDestroy {
  private readonly logger = new Logger(ReminderScheduler.name);
  private readonly pending = new Map<string, Pending>();
  private handler: FireHandler | null = null;

  onFire(handler: FireHandler): void {
    this.handler = handler;
  }

  /**
   * Arms `reminder`; `outputChannel` names the output channel of the turn that set it (Rasa's
   * `handle_reminder` keeps that channel), where its answer goes when it fires.
   */
  schedule(
    senderId: string,
    reminder: ReminderScheduled,
    outputChannel: string | null = null,
  ): void {
    if (reminder.intent === null) return;
    const at = Date.parse(reminder.dateTime);
    if (Number.isNaN(at)) {
      this.logger.warn(
        { sender: senderId, date_time: reminder.dateTime },
        'reminder with an invalid date_time ignored',
      );
      return;
    }
    const key = `${senderId}\u0000${reminder.name}`;
    this.clear(key);
    const entities = entityList(reminder.entities);
    const intent = reminder.intent;
    const arm = (): NodeJS.Timeout => {
      const delay = Math.max(0, at - Date.now());
      const timer = setTimeout(
        () => {
          if (at - Date.now() > 0) {
            this.pending.set(key, { timer: arm(), intent, entities });
            return;
          }
          this.pending.delete(key);
          void this.handler?.(
            senderId,
            intent,
            entities,
            reminder.timestamp,
            reminder.killOnUserMessage,
            outputChannel,
          ).catch((error: unknown) =>
            this.logger.error(
              { sender: senderId, reminder: reminder.name, error: (error as Error).message },
              'reminder failed',
            ),
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

  /** Reminders waiting to fire (for tests and status). */
  get size(): number {
    return this.pending.size;
  }

  onModuleDestroy(): void {
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
