import { randomUUID } from 'node:crypto';
import { type ReminderChanges } from './reminder-changes';
import {
  cancels,
  type ClaimedReminder,
  type ReminderMatch,
  type ReminderRecord,
  ReminderStore,
} from './reminder-store';

interface Row {
  readonly reminder: ReminderRecord;
  /** trigger time while pending; end of the lease while claimed. */
  dueAt: number;
  claim: string | null;
  attempts: number;
}

/**
 * ReminderStore in this process's memory: for the CLI and tests without a database. Same
 * semantics as the PostgreSQL adapter; its reminders end with the process.
 */
export class InMemoryReminderStore extends ReminderStore {
  private readonly rows = new Map<string, Row>();

  schedule(reminder: ReminderRecord): Promise<void> {
    this.rows.set(key(reminder.conversationId, reminder.name), {
      reminder,
      dueAt: reminder.triggerAt,
      claim: null,
      attempts: 0,
    });
    return Promise.resolve();
  }

  cancel(conversationId: string, match: ReminderMatch): Promise<number> {
    let n = 0;
    for (const [k, row] of this.rows) {
      if (row.reminder.conversationId === conversationId && cancels(match, row.reminder)) {
        this.rows.delete(k);
        n++;
      }
    }
    return Promise.resolve(n);
  }

  claimDue(nowMs: number, limit: number, leaseMs: number): Promise<ClaimedReminder[]> {
    const due = [...this.rows.values()]
      .filter((r) => r.dueAt <= nowMs)
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, limit);
    const claim = randomUUID();
    return Promise.resolve(
      due.map((row) => {
        row.claim = claim;
        row.dueAt = nowMs + leaseMs;
        row.attempts++;
        return { ...row.reminder, claim, attempts: row.attempts };
      }),
    );
  }

  renew(reminders: readonly ClaimedReminder[], nowMs: number, leaseMs: number): Promise<void> {
    for (const r of reminders) {
      const row = this.rows.get(key(r.conversationId, r.name));
      if (row?.claim === r.claim) row.dueAt = nowMs + leaseMs;
    }
    return Promise.resolve();
  }

  complete(reminder: ClaimedReminder): Promise<void> {
    const k = key(reminder.conversationId, reminder.name);
    if (this.rows.get(k)?.claim === reminder.claim) this.rows.delete(k);
    return Promise.resolve();
  }

  retry(reminder: ClaimedReminder, atMs: number): Promise<void> {
    const row = this.rows.get(key(reminder.conversationId, reminder.name));
    if (row?.claim === reminder.claim) {
      row.claim = null;
      row.dueAt = atMs;
    }
    return Promise.resolve();
  }

  dueCount(nowMs: number): Promise<number> {
    let n = 0;
    for (const row of this.rows.values()) if (row.claim !== null || row.dueAt <= nowMs) n++;
    return Promise.resolve(n);
  }

  /**
   * A turn's reminder changes at once (synchronously: nothing else runs in between), as the
   * PostgreSQL tracker store writes them with the events: the cancellations, except of names
   * being scheduled, then the reminders set.
   */
  apply(conversationId: string, changes: ReminderChanges): void {
    const scheduled = new Set(changes.schedule.map((r) => r.name));
    const killedBefore = changes.killedBefore;
    for (const [k, row] of this.rows) {
      const r = row.reminder;
      if (r.conversationId !== conversationId || scheduled.has(r.name)) continue;
      const killed = killedBefore !== null && r.killOnUserMessage && r.scheduledAt < killedBefore;
      if (killed || changes.cancel.some((match) => cancels(match, r))) this.rows.delete(k);
    }
    for (const r of changes.schedule) {
      this.rows.set(key(conversationId, r.name), {
        reminder: { ...r, conversationId },
        dueAt: r.triggerAt,
        claim: null,
        attempts: 0,
      });
    }
  }

  /** Reminders stored (pending or claimed). */
  get size(): number {
    return this.rows.size;
  }

  /** The stored reminders (pending or claimed), in no particular order. */
  list(): ReminderRecord[] {
    return [...this.rows.values()].map((row) => row.reminder);
  }
}

function key(conversationId: string, name: string): string {
  return `${conversationId}\u0000${name}`;
}
