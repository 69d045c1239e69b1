import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type SparseVector } from 'src/core/nlu/message';
import { SoftmaxModel, type SoftmaxTrainOptions } from 'src/core/nlu/softmax-model';

/** The compiled worker; absent when running from TypeScript sources (then training stays in-thread). */
const WORKER_FILE = join(__dirname, 'softmax-worker.js');

/** Whether SoftmaxModel training can run on a worker thread here. */
export function softmaxWorkerAvailable(): boolean {
  return existsSync(WORKER_FILE);
}

/** Threads training may use by default: both cores of a 2-core machine, at most 2. */
export function defaultTrainingThreads(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

/**
 * SoftmaxModel.train on a worker thread, so the main thread can train something else meanwhile.
 * The worker runs the same seeded code on a structured-clone copy of the rows, so the model is
 * bit-identical to an in-thread run whatever the timing. `onEpoch` receives the worker's epochs.
 */
export function trainSoftmaxInWorker(
  rows: readonly SparseVector[],
  labels: readonly number[],
  options: SoftmaxTrainOptions,
): Promise<SoftmaxModel> {
  const { onEpoch, ...plain } = options;
  return new Promise<SoftmaxModel>((resolve, reject) => {
    let settled = false;
    const worker = new Worker(WORKER_FILE, {
      workerData: { rows, labels, options: plain },
    });
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      reject(error instanceof Error ? error : new Error(`training worker ${String(error)}`));
    };
    worker.on('message', (message: { type: string; epoch?: number; model?: unknown }) => {
      if (message.type === 'epoch' && onEpoch) {
        Promise.resolve(onEpoch(message.epoch ?? 0, 0)).catch(fail);
      } else if (message.type === 'done') {
        try {
          const model = SoftmaxModel.fromJSON(message.model, 'training worker model');
          settled = true;
          void worker.terminate();
          resolve(model);
        } catch (e) {
          fail(e);
        }
      }
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(`exited with code ${code} before finishing`));
  });
}
