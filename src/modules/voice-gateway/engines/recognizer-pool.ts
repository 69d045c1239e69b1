import { Logger } from '@nestjs/common';
import { type RecognitionEvent, type SpeechRecognizer } from 'src/core';
import { PocketsphinxRecognizer, type PocketsphinxSetup } from './pocketsphinx-asr';

/** Upper bound of `asr.pool_size`: each process holds its own copy of the model. */
export const MAX_POOL_SIZE = 16;
export const DEFAULT_POOL_SIZE = 8;
/** A process that gives no result this long after the end of an utterance is replaced. */
const RESULT_TIMEOUT_MS = 4000;

interface Worker {
  readonly recognizer: PocketsphinxRecognizer;
  lease: Lease | null;
  timer: ReturnType<typeof setTimeout> | null;
}

/** One utterance of one call, from its first audio to its result. */
interface Lease {
  readonly owner: PooledRecognizer;
  worker: Worker | null;
  /** Audio that arrived while every process was busy. */
  readonly queued: Uint8Array[];
  ended: boolean;
  /** The call ended: the result is not delivered. */
  discarded: boolean;
}

/**
 * Warm offline recognisers shared by all calls: `size` long-running pocketsphinx processes with
 * the model and grammar loaded, per set-up (model and grammar). The recogniser is gated, so a
 * call's audio comes as separate utterances; each utterance takes a free process from its first
 * audio until its result (audio arriving while all are busy waits in memory and is written at
 * once when one frees up). No call ever waits for a process start, the number of processes is
 * bounded whatever the number of calls, and `close()` stops them all. A process that gives no
 * result for an ended utterance, or dies, is replaced; processes of a replaced set-up (another
 * model) are stopped once idle.
 */
export class RecognizerPool {
  private readonly logger = new Logger(RecognizerPool.name);
  private workers: Worker[] = [];
  private readonly waiting: Lease[] = [];
  private readonly live = new Set<PocketsphinxRecognizer>();
  private setup: PocketsphinxSetup | null = null;
  private closed = false;
  private failures = 0;

  constructor(
    readonly size: number,
    private readonly create: (setup: PocketsphinxSetup) => PocketsphinxRecognizer = (setup) =>
      new PocketsphinxRecognizer(setup),
  ) {
    if (!Number.isInteger(size) || size < 1 || size > MAX_POOL_SIZE) {
      throw new Error(`pool size must be an integer from 1 to ${MAX_POOL_SIZE}`);
    }
  }

  /** Processes started by the pool and not yet exited. */
  get processCount(): number {
    return this.live.size;
  }

  /** Processes with their model loaded and no utterance. */
  get idleCount(): number {
    return this.workers.filter((w) => w.lease === null && w.recognizer.isReady).length;
  }

  /** Starts the processes for `setup` (at start-up, and when another model is loaded). */
  warm(setup: PocketsphinxSetup): void {
    if (this.closed) return;
    this.use(setup);
  }

  /** A recogniser for a new call (no process of its own). */
  acquire(setup: PocketsphinxSetup): SpeechRecognizer {
    if (this.closed) throw new Error('the recognizer pool is closed');
    this.use(setup);
    return new PooledRecognizer(this);
  }

  /** Stops every process and waits for them to exit. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.workers) if (w.timer !== null) clearTimeout(w.timer);
    this.workers = [];
    this.waiting.length = 0;
    await Promise.all([...this.live].map((r) => r.close()));
  }

  // ------------------------------------------------------------- utterances

  /** @internal the first audio of an utterance */
  begin(owner: PooledRecognizer): Lease {
    const lease: Lease = { owner, worker: null, queued: [], ended: false, discarded: false };
    const free = this.freeWorker();
    if (free !== null) this.assign(lease, free);
    else this.waiting.push(lease);
    return lease;
  }

  /** @internal */
  write(lease: Lease, audio: Uint8Array): void {
    if (lease.worker !== null) lease.worker.recognizer.sendAudio(audio);
    else lease.queued.push(audio);
  }

  /** @internal the end of an utterance (the call's gate heard it end, or the call ended) */
  end(lease: Lease, discard = false): void {
    lease.discarded ||= discard;
    if (lease.ended) return;
    lease.ended = true;
    const worker = lease.worker;
    if (worker === null) {
      if (discard) this.dropWaiting(lease);
      return;
    }
    worker.recognizer.endOfSpeech();
    this.armTimeout(worker);
  }

  private assign(lease: Lease, worker: Worker): void {
    worker.lease = lease;
    lease.worker = worker;
    for (const audio of lease.queued.splice(0)) worker.recognizer.sendAudio(audio);
    if (lease.ended) {
      worker.recognizer.endOfSpeech();
      this.armTimeout(worker);
    }
  }

  private armTimeout(worker: Worker): void {
    if (worker.timer !== null) clearTimeout(worker.timer);
    worker.timer = setTimeout(() => {
      worker.timer = null;
      // no result: its output can no longer be told apart from the next utterance's
      this.logger.warn('a pocketsphinx process gave no result; replacing it');
      this.retire(worker);
    }, RESULT_TIMEOUT_MS);
    worker.timer.unref?.();
  }

  private onResult(worker: Worker, event: RecognitionEvent): void {
    const lease = worker.lease;
    if (lease === null) return; // output without an utterance (cannot happen when gated)
    if (!lease.discarded) lease.owner.deliver(event);
    if (!lease.ended) return; // pocketsphinx split a long utterance: more may come
    this.release(worker);
  }

  private release(worker: Worker): void {
    if (worker.timer !== null) clearTimeout(worker.timer);
    worker.timer = null;
    if (worker.lease !== null) worker.lease.worker = null;
    worker.lease = null;
    if (!this.workers.includes(worker)) {
      void worker.recognizer.close(); // of a replaced set-up
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) this.assign(next, worker);
  }

  private dropWaiting(lease: Lease): void {
    const i = this.waiting.indexOf(lease);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  private freeWorker(): Worker | null {
    let candidate: Worker | null = null;
    for (const w of this.workers) {
      if (w.lease !== null) continue;
      if (w.recognizer.isReady) return w;
      candidate ??= w; // still loading: audio waits in its pipe
    }
    return candidate;
  }

  // -------------------------------------------------------------- processes

  private use(setup: PocketsphinxSetup): void {
    if (this.setup !== null && (this.setup === setup || sameSetup(this.setup, setup))) {
      this.setup = setup;
      return;
    }
    this.setup = setup;
    this.failures = 0;
    const old = this.workers;
    this.workers = [];
    for (const w of old) if (w.lease === null) void w.recognizer.close(); // busy ones: when done
    for (let i = 0; i < this.size; i++) this.spawn(setup);
  }

  private spawn(setup: PocketsphinxSetup): void {
    if (this.closed) return;
    const recognizer = this.create(setup);
    const worker: Worker = { recognizer, lease: null, timer: null };
    this.workers.push(worker);
    this.live.add(recognizer);
    recognizer.onEvent((event) => this.onResult(worker, event));
    recognizer.onError((error) => this.logger.warn(error.message));
    void recognizer.exited.then(() => {
      this.live.delete(recognizer);
      const i = this.workers.indexOf(worker);
      if (i < 0 || this.closed) return;
      // died while in use (killed from outside, crashed): replace it
      this.workers.splice(i, 1);
      if (worker.timer !== null) clearTimeout(worker.timer);
      if (!recognizer.isReady) this.failures++;
      if (this.failures > 3) {
        this.logger.warn('pocketsphinx keeps failing to start; not restarting it');
        return;
      }
      if (this.setup !== null) this.spawn(this.setup);
      const waiting = this.waiting.shift();
      const free = waiting !== undefined ? this.freeWorker() : null;
      if (waiting !== undefined && free !== null) this.assign(waiting, free);
      else if (waiting !== undefined) this.waiting.unshift(waiting);
    });
  }

  /** Replaces a process whose output can no longer be trusted. */
  private retire(worker: Worker): void {
    const i = this.workers.indexOf(worker);
    if (i >= 0) this.workers.splice(i, 1);
    if (worker.lease !== null) worker.lease.worker = null;
    worker.lease = null;
    void worker.recognizer.close();
    if (!this.closed && this.setup !== null && i >= 0) this.spawn(this.setup);
    const next = this.waiting.shift();
    const free = next !== undefined ? this.freeWorker() : null;
    if (next !== undefined && free !== null) this.assign(next, free);
    else if (next !== undefined) this.waiting.unshift(next);
  }
}

/** A call's recogniser: each utterance borrows a process of the pool. */
export class PooledRecognizer implements SpeechRecognizer {
  readonly gated = true;
  private readonly listeners: Array<(event: RecognitionEvent) => void> = [];
  private lease: Lease | null = null;
  private closed = false;

  constructor(private readonly pool: RecognizerPool) {}

  sendAudio(audio: Uint8Array): void {
    if (this.closed) return;
    this.lease ??= this.pool.begin(this);
    this.pool.write(this.lease, audio);
  }

  endOfSpeech(): void {
    if (this.lease === null) return;
    this.pool.end(this.lease);
    this.lease = null;
  }

  onEvent(listener: (event: RecognitionEvent) => void): void {
    this.listeners.push(listener);
  }

  onError(): void {
    // process failures are the pool's to handle; the call loses at most one utterance
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.lease !== null) this.pool.end(this.lease, true);
    this.lease = null;
    return Promise.resolve();
  }

  /** @internal */
  deliver(event: RecognitionEvent): void {
    if (this.closed) return;
    for (const listener of this.listeners) listener(event);
  }
}

function sameSetup(a: PocketsphinxSetup, b: PocketsphinxSetup): boolean {
  return a.args.length === b.args.length && a.args.every((arg, i) => arg === b.args[i]);
}
