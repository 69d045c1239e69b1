/* Model selection helper: repeated stratified k-fold cross-validation on the `training` split of
 * the Braun corpora only (the test split is never looked at). Variants are DIETClassifier
 * parameter overrides (or whole pipelines) given as a JSON list on the command line:
 *   node bench/nlu/cv.js '[{"label":"base"},{"label":"linear","hidden_layers_sizes":{"text":[]}}]'
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_PIPELINE, trainNlu } from 'src/core/nlu/pipeline';
import { Random } from 'src/core/nlu/random';
import { readBraunCorpus } from 'src/core/training-data/braun-corpus-reader';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { type NluExample } from 'src/core/training-data/nlu-training-data';

// shared/ sits beside the repository; the bench is run from the repository root.
const SHARED = process.env['PARLEY_SHARED'] ?? resolve(process.cwd(), '..', 'shared');
if (!existsSync(join(SHARED, 'datasets', 'braun2017'))) {
  // The Braun et al. (2017) corpora are not part of the repository.
  console.log(
    `${join(SHARED, 'datasets', 'braun2017')} not found: NLU benchmark skipped (set PARLEY_SHARED)`,
  );
  process.exit(0);
}
const CORPORA = ['ChatbotCorpus', 'AskUbuntuCorpus', 'WebApplicationsCorpus'];

interface Variant {
  label: string;
  pipeline?: ComponentConfig[];
  [key: string]: unknown;
}

function folds(examples: readonly NluExample[], k: number, seed: number): number[][] {
  const rng = new Random(seed);
  const byIntent = new Map<string, number[]>();
  examples.forEach((e, i) => {
    const list = byIntent.get(e.intent) ?? [];
    list.push(i);
    byIntent.set(e.intent, list);
  });
  const out: number[][] = Array.from({ length: k }, () => []);
  let next = 0;
  for (const key of [...byIntent.keys()].sort()) {
    for (const i of rng.shuffle(byIntent.get(key) ?? [])) {
      out[next % k]?.push(i);
      next += 1;
    }
  }
  return out;
}

export async function main(args: readonly string[]): Promise<void> {
  const variants = JSON.parse(args[0] ?? '[{"label":"default"}]') as Variant[];
  const k = Number(process.env['CV_K'] ?? 5);
  const repeats = Number(process.env['CV_REPEATS'] ?? 3);
  const corpora = CORPORA.map((name) => {
    const file = join(SHARED, 'datasets', 'braun2017', `${name}.json`);
    return readBraunCorpus(readFileSync(file, 'utf8'), file).train;
  });
  for (const v of variants) {
    const { label, pipeline, ...diet } = v;
    const pl =
      pipeline ??
      DEFAULT_PIPELINE.map((c) =>
        c.name === 'DIETClassifier' ? { ...c, entity_recognition: false, ...diet } : c,
      );
    const line: string[] = [];
    const total = { tp: 0, fp: 0, fn: 0 };
    let nll = 0;
    let count = 0;
    for (const data of corpora) {
      const c = { tp: 0, fp: 0, fn: 0 };
      for (let rep = 0; rep < repeats; rep++) {
        for (const fold of folds(data.examples, k, 1000 + rep)) {
          const held = new Set(fold);
          const train = { ...data, examples: data.examples.filter((_, i) => !held.has(i)) };
          const model = await trainNlu(train, { language: 'en', pipeline: pl }, { seed: 42 + rep });
          for (const i of fold) {
            const ex = data.examples[i] as NluExample;
            const m = model.process(ex.text);
            let p = m.intent?.name ?? 'None';
            if (p === 'nlu_fallback') p = 'None';
            const conf = m.intentRanking?.find((r) => r.name === ex.intent)?.confidence ?? 1e-6;
            nll -= Math.log(Math.max(conf, 1e-6));
            count += 1;
            if (p === ex.intent) {
              if (p !== 'None') c.tp += 1;
            } else {
              if (ex.intent !== 'None') c.fn += 1;
              if (p !== 'None') c.fp += 1;
            }
          }
        }
      }
      total.tp += c.tp;
      total.fp += c.fp;
      total.fn += c.fn;
      line.push(`${f1(c).toFixed(3)} (${c.tp}/${c.fp}/${c.fn})`);
    }
    console.log(
      `${label.padEnd(28)} ${line.join('  ')}  total ${f1(total).toFixed(4)}  nll ${(nll / count).toFixed(3)}`,
    );
  }
}

function f1(c: { tp: number; fp: number; fn: number }): number {
  const p = c.tp + c.fp ? c.tp / (c.tp + c.fp) : 0;
  const r = c.tp + c.fn ? c.tp / (c.tp + c.fn) : 0;
  return p + r ? (2 * p * r) / (p + r) : 0;
}
