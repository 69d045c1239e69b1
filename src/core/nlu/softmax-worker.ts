/**
 * Worker-thread entry point of trainSoftmaxParallel (softmax-parallel.ts): trains one
 * SoftmaxModel exactly as the main thread would and posts its JSON state back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type SparseVector } from 'src/core/nlu/message';
import { SoftmaxModel, type SoftmaxTrainOptions } from 'src/core/nlu/softmax-model';

interface Job {
  readonly rows: readonly SparseVector[];
  readonly labels: readonly number[];
  readonly options: Omit<SoftmaxTrainOptions, 'onEpoch'>;
}

async function run(): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const job = workerData as Job;
  const model = await SoftmaxModel.train(job.rows, job.labels, {
    ...job.options,
    onEpoch: (epoch) => port.postMessage({ type: 'epoch', epoch }),
  });
  port.postMessage({ type: 'done', model: model.toJSON() });
}

void run();
