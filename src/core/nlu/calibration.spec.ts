import { createHash } from 'node:crypto';
import { loadNlu, trainNlu, type TrainedNlu } from 'src/core/nlu/pipeline';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { type NluExample, type NluTrainingData } from 'src/core/training-data/nlu-training-data';

function dataOf(examples: NluExample[]): NluTrainingData {
  return { examples, synonyms: {}, regexFeatures: [], lookupTables: [], responses: {} };
}

const FORM_BOT = dataOf(
  [
    ['inform', 'my name is anna'],
    ['inform', 'i live in berlin'],
    ['inform', 'my email is anna at example dot com'],
    ['inform', 'the number is twelve'],
    ['inform', 'call me bob'],
    ['affirm', 'yes'],
    ['affirm', 'yes please'],
    ['affirm', 'that is right'],
    ['affirm', 'correct'],
    ['deny', 'no'],
    ['deny', 'no thanks'],
    ['deny', 'that is wrong'],
    ['deny', 'not at all'],
  ].map(([intent, text]) => ({ intent: intent!, text: text!, entities: [] })),
);

const sum = (xs: ReadonlyArray<{ confidence: number }>): number =>
  xs.reduce((a, r) => a + r.confidence, 0);

describe('unknown input gets low intent confidence', () => {
  let model: TrainedNlu;
  beforeAll(async () => {
    model = await trainNlu(FORM_BOT, { language: 'en', pipeline: null }, { seed: 3 });
  });

  it('answers nlu_fallback for words never seen in training', () => {
    for (const text of ['asdf qwerty zxcv', 'blorp fleem gnarf', 'xyzzy']) {
      const m = model.process(text);
      expect(m.knownTokenShare).toBe(0);
      expect(m.intent?.name).toBe('nlu_fallback');
      const diet = (m.intentRanking ?? []).filter((r) => r.name !== 'nlu_fallback');
      expect(diet.length).toBe(3);
      for (const r of diet) expect(r.confidence).toBe(0);
    }
  });

  it('keeps the confidences of known words, which sum to 1', () => {
    const m = model.process('yes please');
    expect(m.knownTokenShare).toBe(1);
    expect(m.intent?.name).toBe('affirm');
    expect(sum(m.intentRanking ?? [])).toBeCloseTo(1, 6);
  });

  it('scales the ranking by twice the known share when under half the words are known', () => {
    const known = model.process('my name is anna').intentRanking ?? [];
    // 4 of 10 tokens known: every confidence × 0.8, so the ranking sums to 0.8.
    const m = model.process('my name is anna qqq www eee rrr ttt yyy');
    expect(m.knownTokenShare).toBeCloseTo(0.4, 10);
    expect(sum(m.intentRanking ?? [])).toBeCloseTo(0.8, 6);
    expect(m.intentRanking?.map((r) => r.name)).toEqual(known.map((r) => r.name));
    // At least half known: no scaling.
    const half = model.process('my name is anna qqq www eee rrr');
    expect(half.knownTokenShare).toBe(0.5);
    expect(sum(half.intentRanking ?? [])).toBeCloseTo(1, 6);
  });

  it('survives the JSON round trip (a parse-time rule, no model state)', () => {
    const restored = loadNlu(JSON.parse(JSON.stringify(model.toJSON())) as unknown);
    expect(restored.parse('asdf qwerty zxcv')).toEqual(model.parse('asdf qwerty zxcv'));
  });

  it('is not applied without a word-level CountVectorsFeaturizer', async () => {
    const charOnly = await trainNlu(
      FORM_BOT,
      {
        language: 'en',
        pipeline: [
          { name: 'WhitespaceTokenizer' },
          { name: 'CountVectorsFeaturizer', analyzer: 'char_wb', min_ngram: 1, max_ngram: 3 },
          { name: 'DIETClassifier', epochs: 20 },
        ],
      },
      { seed: 3 },
    );
    const m = charOnly.process('asdf qwerty zxcv');
    expect(m.knownTokenShare).toBeUndefined();
    expect(sum(m.intentRanking ?? [])).toBeCloseTo(1, 6);
  });
});

describe('early stopping and calibration on examples the model did not learn from', () => {
  /**
   * 1,200 examples (so 10 % are held out) of two intents that three cue words tell apart only
   * 70 % of the time, each with a token of its own: the model can learn the cues, then only
   * memorise, and the held-out loss rises.
   */
  function noisyData(seed = 12345, offset = 0): NluTrainingData {
    let s = seed;
    const next = (): number => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    const examples: NluExample[] = [];
    for (let i = 0; i < 1200; i++) {
      const a = next() < 0.5;
      const cue = (a ? ['alpha', 'apple', 'amber'] : ['beta', 'banana', 'bronze'])[
        Math.floor(next() * 3)
      ]!;
      const noisy = next() < 0.3;
      examples.push({
        intent: a !== noisy ? 'intent_a' : 'intent_b',
        text: `please ${cue} item${offset + i} now`,
        entities: [],
      });
    }
    return dataOf(examples);
  }

  const pipeline = (epochs: number, calibrate = true): ComponentConfig[] => [
    { name: 'WhitespaceTokenizer' },
    { name: 'CountVectorsFeaturizer' },
    // A fixed batch size: the batches of an epoch do not depend on the number of epochs.
    {
      name: 'DIETClassifier',
      epochs,
      batch_size: 64,
      learning_rate: 0.05,
      calibrate_confidence: calibrate,
    },
  ];

  /** The trained model and how many epochs DIET ran (from its progress reports). */
  async function train(epochs: number): Promise<{ model: TrainedNlu; ran: number }> {
    // DIET reports 0, then (epoch + 1) / epochs after each epoch, then 1 twice when done.
    const reports: number[] = [];
    const model = await trainNlu(
      noisyData(),
      { language: 'en', pipeline: pipeline(epochs) },
      {
        seed: 5,
        threads: 1,
        onProgress: (stage, fraction) => {
          if (stage.startsWith('DIETClassifier')) reports.push(fraction);
        },
      },
    );
    const perEpoch = reports.slice(1, -2);
    expect(perEpoch.map((f) => Math.round(f * epochs))).toEqual(perEpoch.map((_, i) => i + 1));
    return { model, ran: perEpoch.length };
  }

  /** A digest of DIET's trained state (weights included). */
  const dietState = (model: TrainedNlu): string =>
    createHash('sha256')
      .update(JSON.stringify((model.toJSON()['pipeline'] as Array<{ state: unknown }>)[2]?.state))
      .digest('hex');

  it('stops 3 epochs after the best one and keeps the best epoch weights', async () => {
    const stopped = await train(60);
    expect(stopped.ran).toBeGreaterThan(3);
    expect(stopped.ran).toBeLessThan(60);
    // The best epoch was 3 before the last: the same training cut off right after it.
    const best = await train(stopped.ran - 3);
    expect(best.ran).toBe(stopped.ran - 3);
    expect(dietState(stopped.model)).toEqual(dietState(best.model));
  });

  /**
   * `n` examples of 20 intents, each told by three cue words of its own, a share (`noise`) of
   * them labelled at random, each with a token of its own (unseen at parse time).
   */
  function twentyIntents(seed: number, offset: number, n: number, noise = 0.1): NluExample[] {
    let s = seed;
    const next = (): number => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    return Array.from({ length: n }, (_, i) => {
      const k = Math.floor(next() * 20);
      const cue = `cue${k}x${Math.floor(next() * 3)}`;
      const label = next() < noise ? Math.floor(next() * 20) : k;
      return {
        intent: `intent_${label}`,
        text: `please ${cue} item${offset + i} now`,
        entities: [],
      };
    });
  }

  /** DIET trained on 2,000 of twentyIntents (200 held out), with or without calibration. */
  const trainTwenty = (noise: number, calibrate: boolean): Promise<TrainedNlu> =>
    trainNlu(
      dataOf(twentyIntents(12345, 0, 2000, noise)),
      {
        language: 'en',
        pipeline: [
          { name: 'WhitespaceTokenizer' },
          { name: 'CountVectorsFeaturizer' },
          { name: 'DIETClassifier', epochs: 60, calibrate_confidence: calibrate },
        ],
      },
      { seed: 5, threads: 1 },
    );

  it('calibrates the confidence on the held-out examples: unseen messages are right as often as it says', async () => {
    const fresh = twentyIntents(777, 100_000, 600);
    /** Mean top confidence minus accuracy over the fresh messages. */
    const overconfidence = async (calibrate: boolean): Promise<number> => {
      const model = await trainTwenty(0.1, calibrate);
      let confidence = 0;
      let right = 0;
      for (const e of fresh) {
        const parsed = model.parse(e.text);
        confidence += parsed.intent?.confidence ?? 0;
        if (parsed.intent?.name === e.intent) right++;
      }
      return (confidence - right) / fresh.length;
    };
    // Label smoothing and the noise keep the trained softmax well below its accuracy (about
    // 0.63 against 0.91); scaled on the held-out tenth, its confidence is about its accuracy.
    const raw = await overconfidence(false);
    const calibrated = await overconfidence(true);
    expect(raw).toBeLessThan(-0.15);
    expect(Math.abs(calibrated)).toBeLessThan(0.05);
  });

  it('sharpens at most twofold: a hold-out the model gets all right does not push filler words past the fallback', async () => {
    const [calibrated, raw] = [await trainTwenty(0, true), await trainTwenty(0, false)];
    const temperature = Number(
      /"temperature":([^,}]+)/.exec(JSON.stringify(calibrated.toJSON()))?.[1],
    );
    expect(temperature).toBeCloseTo(0.5, 3);
    // Cue words: sharper than the raw model; words every intent shares: still under 0.3.
    const cue = 'please cue3x1 now';
    expect(calibrated.parse(cue).intent?.confidence).toBeGreaterThan(
      raw.parse(cue).intent?.confidence ?? 1,
    );
    for (const filler of ['please now', 'now now now please']) {
      expect(calibrated.parse(filler).intent?.confidence).toBeLessThan(0.3);
    }
  });

  it('calibrates a small training set (no hold-out) by cross-validation, with progress that never goes back', async () => {
    const fresh = twentyIntents(777, 100_000, 600);
    const small = dataOf(twentyIntents(12345, 0, 400, 0.1));
    const trainSmall = async (
      calibrate: boolean,
    ): Promise<{ model: TrainedNlu; reports: number[] }> => {
      const reports: number[] = [];
      const model = await trainNlu(
        small,
        {
          language: 'en',
          pipeline: [
            { name: 'WhitespaceTokenizer' },
            { name: 'CountVectorsFeaturizer' },
            { name: 'DIETClassifier', epochs: 60, calibrate_confidence: calibrate },
          ],
        },
        {
          seed: 5,
          threads: 1,
          onProgress: (stage, fraction) => {
            if (stage.startsWith('DIETClassifier')) reports.push(fraction);
          },
        },
      );
      return { model, reports };
    };
    const overconfidence = (model: TrainedNlu): number => {
      let gap = 0;
      for (const e of fresh) {
        const parsed = model.parse(e.text);
        gap += (parsed.intent?.confidence ?? 0) - (parsed.intent?.name === e.intent ? 1 : 0);
      }
      return gap / fresh.length;
    };
    const raw = await trainSmall(false);
    const calibrated = await trainSmall(true);
    expect(JSON.stringify(raw.model.toJSON())).not.toMatch(/"temperature":/);
    expect(JSON.stringify(calibrated.model.toJSON())).toMatch(/"temperature":/);
    expect(overconfidence(raw.model)).toBeLessThan(-0.15);
    expect(Math.abs(overconfidence(calibrated.model))).toBeLessThan(0.05);
    // The ranking is the raw model's: only the confidences change.
    for (const e of fresh.slice(0, 50)) {
      expect(calibrated.model.parse(e.text).intent?.name).toBe(
        raw.model.parse(e.text).intent?.name,
      );
    }
    const backwards = calibrated.reports.filter((f, i) => i > 0 && f < calibrated.reports[i - 1]!);
    expect(backwards).toEqual([]);
    expect(calibrated.reports.at(-1)).toBe(1);
  });

  it('keeps the temperature in the model and refuses one that is not positive', async () => {
    const model = await trainNlu(
      noisyData(),
      { language: 'en', pipeline: pipeline(60) },
      { seed: 5, threads: 1 },
    );
    const json = model.toJSON();
    const text = 'please alpha item5 now';
    const reloaded = loadNlu(JSON.parse(JSON.stringify(json)) as typeof json);
    expect(reloaded.parse(text).intent).toEqual(model.parse(text).intent);
    const serialised = JSON.stringify(json);
    expect(serialised).toMatch(/"temperature":/);
    const broken = JSON.parse(serialised.replace(/"temperature":[^,}]+/g, '"temperature":0'));
    expect(() => loadNlu(broken as typeof json)).toThrow(/temperature: expected a positive number/);
  });
});
