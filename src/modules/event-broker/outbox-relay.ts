import { type EventOutbox } from 'src/modules/tracker';
import { counter, gauge, histogram } from 'src/platform/metrics/registry';
import { type EventBroker } from './brokers/event-broker';
import { toBrokerMessage } from './wire';

export interface RelayOptions {
  /** Outbox rows (turns) claimed per transaction. */
  readonly batchTurns: number;
  /** How often an idle relay looks for rows other instances wrote. */
  readonly pollMs: number;
  /** First retry delay after a failure; doubles up to maxBackoffMs. */
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /**
   * After an idle relay is woken by a commit, how long it lets further commits gather before
   * it claims: one claim transaction then serves many turns instead of one each.
   */
  readonly coalesceMs: number;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = {
  batchTurns: 500,
  pollMs: 1_000,
  initialBackoffMs: 200,
  maxBackoffMs: 30_000,
  coalesceMs: 10,
};

export interface RelayLog {
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
}

const backlogGauge = (): ReturnType<typeof gauge> =>
  gauge('parley_outbox_backlog', 'Events in the event-broker outbox not yet published');
const ageGauge = (): ReturnType<typeof gauge> =>
  gauge(
    'parley_outbox_oldest_age_seconds',
    'Age of the oldest turn in the event-broker outbox (0 when empty)',
  );
const publishCounter = (): ReturnType<typeof counter> =>
  counter('parley_broker_publish_total', 'Events published to the event broker', [
    'broker',
    'outcome',
  ]);

const batchHistogram = (): ReturnType<typeof histogram> =>
  histogram(
    'parley_outbox_relay_batch_turns',
    'Turns published per relay pass (one claim transaction and one wait for broker confirms)',
    [],
    [1, 2, 5, 10, 20, 50, 100, 200, 500],
  );

/**
 * Publishes the outbox after commit. One loop per process: it runs a relay pass (claim a batch
 * `FOR UPDATE SKIP LOCKED`, publish, delete on confirm — EventOutbox.relay) as long as passes
 * find rows; idle, it sleeps until the tracker store signals a committed append (in-process) or
 * the poll interval passes (rows of other instances; LISTEN/NOTIFY is not used because NOTIFY
 * serialises every committing transaction on a global lock, a cost on every turn). A failed pass
 * (broker down) rolls back and retries with exponential backoff and jitter; turns are not
 * affected, the outbox grows and drains later.
 */
export class OutboxRelay {
  private stopped = true;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private pending = false;
  private failures = 0;
  private lastBacklogAt = 0;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly outbox: EventOutbox,
    private readonly broker: EventBroker,
    private readonly log: RelayLog,
    private readonly options: RelayOptions = DEFAULT_RELAY_OPTIONS,
  ) {
    outbox.onWritten(() => this.wake());
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Consecutive failed passes (0: the last pass published or found nothing to publish). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Stops the loop after the pass in progress (rows not yet relayed stay in the outbox). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    this.loop = null;
  }

  private wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /**
   * Publishes what the outbox holds now and resolves true once a pass found it empty, or false
   * when `timeoutMs` ran out first (broker down): call it on SIGTERM before closing.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    if (this.stopped) return false;
    let timer: NodeJS.Timeout | undefined;
    let waiter: (() => void) | undefined;
    const idle = new Promise<boolean>((resolve) => {
      waiter = () => resolve(true);
      this.idleWaiters.push(waiter);
    });
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    this.wake();
    const drained = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    const index = waiter ? this.idleWaiters.indexOf(waiter) : -1;
    if (index >= 0) this.idleWaiters.splice(index, 1);
    return drained;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      // Flush waiters registered before this pass started are answered by its outcome.
      const waiting = this.idleWaiters.splice(0);
      this.pending = false;
      let relayed = 0;
      try {
        relayed = (await this.pass()).turns;
        if (relayed > 0) batchHistogram().observe(relayed);
        if (this.failures > 0) {
          this.log.info('event broker reachable again; publishing the outbox', {
            broker: this.broker.target,
          });
        }
        this.failures = 0;
      } catch (error) {
        this.idleWaiters.unshift(...waiting);
        this.failures++;
        const delay = this.backoff();
        if (this.failures === 1 || this.failures % 10 === 0) {
          this.log.warn('event broker publish failed; turns go on, the outbox keeps them', {
            broker: this.broker.target,
            err: error instanceof Error ? error.message : String(error),
            failures: this.failures,
            retryInMs: delay,
          });
        }
        await this.refreshBacklog(false);
        await this.sleep(delay, false);
        continue;
      }
      if (relayed > 0) {
        this.idleWaiters.unshift(...waiting);
        await this.refreshBacklog(false);
        // A batch short of full caught up with the outbox: under a steady stream of turns the
        // next pass would claim the one or two committed meanwhile. Let them gather first, as
        // after an idle wake-up; a full batch means a backlog, drained at once.
        if (relayed < this.options.batchTurns && this.options.coalesceMs > 0 && !this.stopped) {
          await this.sleep(this.options.coalesceMs, false);
        }
        continue;
      }
      for (const resolve of waiting) resolve();
      await this.refreshBacklog(false);
      if (!this.pending && this.idleWaiters.length === 0) {
        await this.sleep(this.options.pollMs, true);
        if (this.pending && !this.stopped && this.options.coalesceMs > 0) {
          await this.sleep(this.options.coalesceMs, false);
        }
      }
    }
  }

  private async pass(): Promise<{ turns: number; events: number }> {
    const publishes = publishCounter();
    return this.outbox.relay(this.options.batchTurns, async (events) => {
      const messages = events.map(toBrokerMessage);
      try {
        await this.broker.publish(messages);
      } catch (error) {
        publishes.inc({ broker: this.broker.name, outcome: 'failure' }, messages.length);
        throw error;
      }
      publishes.inc({ broker: this.broker.name, outcome: 'success' }, messages.length);
    });
  }

  private backoff(): number {
    const base = Math.min(
      this.options.maxBackoffMs,
      this.options.initialBackoffMs * 2 ** Math.min(this.failures - 1, 20),
    );
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** Backlog gauges, at most once a second unless `force`. */
  async refreshBacklog(force: boolean): Promise<void> {
    const now = Date.now();
    if (!force && now - this.lastBacklogAt < 1_000) return;
    this.lastBacklogAt = now;
    try {
      const backlog = await this.outbox.backlog();
      backlogGauge().set(backlog.events);
      ageGauge().set(backlog.oldestAgeSeconds);
    } catch {
      // The database is down: the gauges keep their last value; the pass reports the failure.
    }
  }

  /** Sleeps `ms`, cut short by a wake-up when `wakeable` (or by stop()). */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = () => {
        if (wakeable || this.stopped) done();
      };
    });
  }
}
