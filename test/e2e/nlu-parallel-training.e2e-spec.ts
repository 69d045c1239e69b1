import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from 'test/utils/create-test-app';

// The compiled pipeline (dist/, built before the e2e run): only there does the training worker
// exist as JavaScript, which is what `parley train` and `POST /model/train` run.
const DIST = join(__dirname, '..', '..', 'dist', 'core');
/* eslint-disable @typescript-eslint/no-require-imports */
const pipeline = require(
  join(DIST, 'nlu', 'pipeline.js'),
) as typeof import('src/core/nlu/pipeline');
const parallel = require(
  join(DIST, 'nlu', 'softmax-parallel.js'),
) as typeof import('src/core/nlu/softmax-parallel');
const reader = require(
  join(DIST, 'training-data', 'nlu-yaml-reader.js'),
) as typeof import('src/core/training-data/nlu-yaml-reader');
/* eslint-enable @typescript-eslint/no-require-imports */

const sha = (value: unknown): string =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex');

describe('NLU training on two threads', () => {
  it('gives the same model bytes as one thread (intent model on a worker, entity CRF here)', async () => {
    expect(parallel.softmaxWorkerAvailable()).toBe(true);
    const file = join(FIXTURES, 'nlu', 'transit-nlu.yml');
    const data = reader.readNluYaml(readFileSync(file, 'utf8'), file).data;
    expect(data.examples.some((e) => e.entities.length > 0)).toBe(true);
    const config = { language: 'en', pipeline: null };
    const stages: string[] = [];
    const one = await pipeline.trainNlu(data, config, { seed: 3, threads: 1 });
    const two = await pipeline.trainNlu(data, config, {
      seed: 3,
      threads: 2,
      onProgress: (stage, fraction) => {
        if (stage.startsWith('DIETClassifier')) stages.push(fraction.toFixed(2));
      },
    });
    expect(sha(two.toJSON())).toBe(sha(one.toJSON()));
    // Progress of the worker's epochs and the CRF's arrived, ending at 100 %.
    expect(stages.length).toBeGreaterThan(10);
    expect(stages[stages.length - 1]).toBe('1.00');
    const text = 'when does the next tram leave the harbour';
    expect(two.parse(text)).toEqual(one.parse(text));
    const other = await pipeline.trainNlu(data, config, { seed: 4, threads: 2 });
    expect(sha(other.toJSON())).not.toBe(sha(one.toJSON()));
  }, 120_000);
});
