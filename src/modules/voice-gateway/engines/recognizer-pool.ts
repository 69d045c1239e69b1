import { Logger } from '@nestjs/common';
import { PocketsphinxRecognizer, type PocketsphinxSetup } from './pocketsphinx-asr';

/** Upper bound of `asr.pool_size`: each warm process holds its own copy of the model. */
export const MAX_POOL_SIZE = 16;
export const DEFAULT_POOL_SIZE = 2;

/**
 * Warm offline recognisers: `size` pocketsphinx processes with the model and grammar already
 * loaded, per set-up (model and grammar), so a call's first turn does not wait for a process
 * start. A call takes one (or, when none is idle, gets a fresh one at once); the pool refills
 * one process at a time, so a burst of calls does not also pay for a burst of refills. Idle
 * processes of a replaced set-up (a new model) are stopped. Every process the pool started is
 * tracked until it exits, and `close()` stops them all: none outlives the server.
 */
export class RecognizerPool {
  private readonly logger = new Logger(RecognizerPool.name);
  private readonly idle: PocketsphinxRecognizer[] = [];
  private readonly live = new Set<PocketsphinxRecognizer>();
  private setup: PocketsphinxSetup | null = null;
  private refilling = false;
  private closed = false;
  private failed = false;

  constructor(
    readonly size: number,
    private readonly create: (setup: PocketsphinxSetup) => PocketsphinxRecognizer = (setup) =>
      new PocketsphinxRecognizer(setup),
  ) {
    if (!Number.isInteger(size) || size < 0 || size > MAX_POOL_SIZE) {
      throw new Error(`pool size must be an integer from 0 to ${MAX_POOL_SIZE}`);
    }
  }

  /** Processes started by the pool and not yet exited (idle and in calls). */
  get processCount(): number {
    return this.live.size;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** Starts filling the pool for `setup` (e.g. at start-up or when a model is loaded). */
  warm(setup: PocketsphinxSetup): void {
    this.use(setup);
    this.refill();
  }

  /** A recogniser for a new call: a warm one when there is one, else a fresh one. */
  acquire(setup: PocketsphinxSetup): PocketsphinxRecognizer {
    if (this.closed) throw new Error('the recognizer pool is closed');
    this.use(setup);
    // prefer a process whose model is loaded
    let index = this.idle.findIndex((r) => r.isReady);
    if (index < 0 && this.idle.length > 0) index = 0;
    const recognizer = index >= 0 ? this.idle.splice(index, 1)[0] : undefined;
    this.refill();
    return recognizer ?? this.spawn(setup);
  }

  /** Stops every process the pool started (idle or in a call) and waits for them to exit. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    await Promise.all([...this.live].map((r) => r.close()));
  }

  private use(setup: PocketsphinxSetup): void {
    if (this.setup === setup) return;
    if (this.setup !== null && sameSetup(this.setup, setup)) {
      this.setup = setup;
      return;
    }
    this.setup = setup;
    this.failed = false;
    // idle processes of the previous model/grammar are of no use any more
    for (const stale of this.idle.splice(0)) void stale.close();
  }

  private spawn(setup: PocketsphinxSetup): PocketsphinxRecognizer {
    const recognizer = this.create(setup);
    this.live.add(recognizer);
    recognizer.exited.then(
      () => {
        this.live.delete(recognizer);
        const i = this.idle.indexOf(recognizer);
        if (i >= 0) {
          // an idle process died (killed from outside): replace it
          this.idle.splice(i, 1);
          this.refill();
        }
      },
      () => undefined,
    );
    return recognizer;
  }

  /** Adds one warm process at a time until the pool is full. */
  private refill(): void {
    if (this.refilling || this.closed || this.failed) return;
    const setup = this.setup;
    if (setup === null || this.idle.length >= this.size) return;
    this.refilling = true;
    const recognizer = this.spawn(setup);
    this.idle.push(recognizer);
    void recognizer.ready.then(() => {
      this.refilling = false;
      if (!recognizer.isReady) {
        // it ended before loading its model: do not respawn in a loop
        this.failed = true;
        this.logger.warn('a warm pocketsphinx process ended during start-up; pool not refilled');
        return;
      }
      if (!this.closed) this.refill();
    });
  }
}

function sameSetup(a: PocketsphinxSetup, b: PocketsphinxSetup): boolean {
  return a.args.length === b.args.length && a.args.every((arg, i) => arg === b.args[i]);
}
