import { type LockStore } from 'src/core/ports/lock-store';
import { type DueReminder } from './reminder-scheduler';
import { type ClaimedReminder, type ReminderStore } from './reminder-store';
import { type RuntimeLog } from './turn-listener';

export interface ReminderPollerOptions {
  /** Period of the sweep for due reminders (set on other instances, or before a restart). */
  readonly sweepMs: number;
  /**
   * How long a claim holds unless renewed: the poller renews the claims of the reminders it is
   * firing every third of it, so a reminder is claimed again after this only when its instance
   * died (or hung). A turn longer than this costs a second claim, not a second fire: the runtime
   * does not fire a reminder whose mark is in the conversation already.
   */
  readonly leaseMs: number;
  /** Reminders claimed per query. */
  readonly batchSize: number;
  /**
   * Reminders this instance fires at the same time (and so holds claimed): no more than its
   * lock can hold at once (`maxInFlightUnder`), or the rest wait in the process for a lock
   * connection — late, and failed once that wait times out — instead of staying in the store
   * for a free slot or another instance.
   */
  readonly maxInFlight: number;
  /** Claims of one reminder (failed fires and crashes) before it is given up. */
  readonly maxAttempts: number;
  /** Delay before a failed fire is tried again. */
  readonly retryDelayMs: number;
}

export const DEFAULT_POLLER_OPTIONS: ReminderPollerOptions = {
  sweepMs: 250,
  leaseMs: 30_000,
  batchSize: 100,
  maxInFlight: 200,
  maxAttempts: 3,
  retryDelayMs: 1_000,
};

/** Longest delay a Node timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2_147_000_000;

/**
 * Fires the due reminders of the ReminderStore, on each instance: it claims them (a lease, so
 * one instance fires each, renewed while it fires them), fires each through `fire` (the
 * runtime's `fireReminder`), then completes it. It wakes on a timer for the next reminder
 * scheduled on this instance and on a periodic sweep for the others. A fire that fails is
 * retried after `retryDelayMs`; after `maxAttempts` claims the reminder is dropped with an
 * error log.
 */
export class ReminderPoller {
  private readonly options: ReminderPollerOptions;
  private readonly inFlight = new Set<Promise<void>>();
  /** The claimed reminders being fired here: their leases are renewed. */
  private readonly held = new Set<ClaimedReminder>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing = false;
  /** The last renewal failed (its error is logged once). */
  private renewFailing = false;
  private next: { at: number; timer: NodeJS.Timeout } | null = null;
  private sweeping: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** Claims stopped at maxInFlight: sweep again when a fire ends. */
  private full = false;
  /** The last sweep failed (its error is logged once). */
  private failing = false;
  private stopped = true;

  constructor(
    private readonly store: ReminderStore,
    private readonly fire: (due: DueReminder) => Promise<void>,
    private readonly log: RuntimeLog,
    options: Partial<ReminderPollerOptions> = {},
    /** Whether reminders can fire now (the assistant is loaded); sweeps wait until then. */
    private readonly ready: () => boolean = () => true,
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_POLLER_OPTIONS, ...options };
  }

  /** `maxInFlight` for an instance whose conversations are locked by `locks`. */
  static maxInFlightUnder(locks: LockStore, limit = DEFAULT_POLLER_OPTIONS.maxInFlight): number {
    return Math.max(1, Math.min(limit, locks.concurrentLocks() ?? limit));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepMs);
    this.sweepTimer.unref();
    this.renewTimer ??= setInterval(
      () => void this.renew(),
      Math.max(1, Math.floor(this.options.leaseMs / 3)),
    );
    this.renewTimer.unref();
    void this.sweep();
  }

  /** A reminder due at `triggerAt` was scheduled on this instance: wake up for it. */
  wake(triggerAt: number): void {
    if (this.stopped) return;
    if (this.next !== null && this.next.at <= triggerAt) return;
    if (this.next !== null) clearTimeout(this.next.timer);
    const delay = Math.min(Math.max(0, triggerAt - this.now()), MAX_TIMER_MS);
    const timer = setTimeout(() => {
      this.next = null;
      // Timers count from the event loop's cached time, so one can fire a millisecond before
      // the clock reads `triggerAt` (and a capped one weeks before): nothing would be due yet,
      // and nothing would wake up again before the next periodic sweep. Wait for the rest.
      if (this.now() < triggerAt) this.wake(triggerAt);
      else void this.sweep();
    }, delay);
    timer.unref();
    this.next = { at: triggerAt, timer };
  }

  /** Claims and fires what is due; resolves when the claims are made (fires run on). */
  sweep(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.sweeping !== null) {
      // One more sweep after the running one: what became due meanwhile is claimed too.
      this.queued ??= this.sweeping.then(() => {
        this.queued = null;
        return this.sweep();
      });
      return this.queued;
    }
    this.sweeping = this.claimAll().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  /** Stops waking up and waits for the reminders being fired (their leases renewed meanwhile). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    if (this.next !== null) clearTimeout(this.next.timer);
    this.sweepTimer = null;
    this.next = null;
    await this.queued;
    await this.sweeping;
    await Promise.all([...this.inFlight]);
    if (this.stopped && this.renewTimer !== null) {
      clearInterval(this.renewTimer);
      this.renewTimer = null;
    }
  }

  /**
   * Renews the lease of every reminder being fired here (every third of the lease, and on
   * demand): a claim lapses only when this instance stops renewing it. A failure is logged
   * once per outage; the claims then lapse and other instances take them over.
   */
  async renew(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    try {
      await this.store.renew([...this.held], this.now(), this.options.leaseMs);
      this.renewFailing = false;
    } catch (error) {
      if (!this.renewFailing) {
        this.log.error('reminder claims not renewed', { error: (error as Error).message });
      }
      this.renewFailing = true;
    } finally {
      this.renewing = false;
    }
  }

  /** Reminders being fired by this instance now. */
  get firing(): number {
    return this.inFlight.size;
  }

  private async claimAll(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped || !this.ready()) return;
        const room = this.options.maxInFlight - this.inFlight.size;
        this.full = room <= 0;
        if (this.full) return;
        const limit = Math.min(this.options.batchSize, room);
        const claimed = await this.store.claimDue(this.now(), limit, this.options.leaseMs);
        this.failing = false;
        for (const reminder of claimed) this.launch(reminder);
        if (claimed.length < limit) return;
      }
    } catch (error) {
      // Once per outage (a sweep runs several times a second), again after a sweep succeeded.
      if (!this.failing) {
        this.log.error('reminder sweep failed', { error: (error as Error).message });
      }
      this.failing = true;
    }
  }

  private launch(reminder: ClaimedReminder): void {
    this.held.add(reminder);
    const run = this.fireOne(reminder)
      .catch((error: unknown) =>
        this.log.error('reminder could not be completed', {
          sender: reminder.conversationId,
          reminder: reminder.name,
          error: (error as Error).message,
        }),
      )
      .finally(() => {
        this.held.delete(reminder);
        this.inFlight.delete(run);
        // A slot is free again: more may be due (claims stopped at maxInFlight).
        if (this.full) void this.sweep();
      });
    this.inFlight.add(run);
  }

  private async fireOne(reminder: ClaimedReminder): Promise<void> {
    const about = { sender: reminder.conversationId, reminder: reminder.name };
    if (reminder.attempts > this.options.maxAttempts) {
      this.log.error('reminder given up after repeated claims', {
        ...about,
        attempts: reminder.attempts - 1,
      });
      await this.store.complete(reminder);
      return;
    }
    try {
      await this.fire(toDue(reminder));
    } catch (error) {
      const last = reminder.attempts >= this.options.maxAttempts;
      this.log.error(last ? 'reminder failed; given up' : 'reminder failed; retried', {
        ...about,
        attempts: reminder.attempts,
        error: (error as Error).message,
      });
      if (last) await this.store.complete(reminder);
      else await this.store.retry(reminder, this.now() + this.options.retryDelayMs);
      return;
    }
    await this.store.complete(reminder);
  }
}

function toDue(r: ClaimedReminder): DueReminder {
  return {
    conversationId: r.conversationId,
    name: r.name,
    triggerAt: r.triggerAt,
    intent: r.intent,
    entities: r.entities,
    scheduledAt: r.scheduledAt,
    killOnUserMessage: r.killOnUserMessage,
    outputChannel: r.outputChannel,
  };
}
