/* NLU benchmark: Parley vs NLP.js (node-nlp 4.27) on the Braun et al. 2017 corpora, plus
 * moodbot training time and a synthetic 15,000-utterance / 150-intent training run. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULT_PIPELINE, trainNlu, type TrainedNlu } from 'src/core/nlu/pipeline';
import { defaultTrainingThreads } from 'src/core/nlu/softmax-parallel';
import { readBraunCorpus } from 'src/core/training-data/braun-corpus-reader';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { type NluExample, type NluTrainingData } from 'src/core/training-data/nlu-training-data';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';

const ROOT = process.env['PARLEY_ROOT'] ?? resolve(__dirname, '..', '..', '..', '..');
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
const NONE = 'None';
/** PARLEY_TRAIN_THREADS=1 trains on one thread (for before/after comparisons); default: trainNlu's. */
const THREADS: { threads?: number } = process.env['PARLEY_TRAIN_THREADS']
  ? { threads: Number(process.env['PARLEY_TRAIN_THREADS']) }
  : {};

interface IntentCounts {
  tp: number;
  fp: number;
  fn: number;
  correct: number;
  total: number;
}

interface EngineResult {
  intentAccuracy: number;
  intentF1: number;
  counts: IntentCounts;
  entityF1: number | null;
  entityCounts: { tp: number; fp: number; fn: number } | null;
  trainMs: number;
  p50Us: number;
  p99Us: number;
  parsesPerSec: number;
}

function f1(c: { tp: number; fp: number; fn: number }): number {
  const p = c.tp + c.fp ? c.tp / (c.tp + c.fp) : 0;
  const r = c.tp + c.fn ? c.tp / (c.tp + c.fn) : 0;
  return p + r ? (2 * p * r) / (p + r) : 0;
}

/** Intent micro-F1 with `None` excluded: wrong = FN for gold, FP for predicted (unless None). */
function scoreIntents(gold: readonly string[], pred: readonly string[]): IntentCounts {
  const c: IntentCounts = { tp: 0, fp: 0, fn: 0, correct: 0, total: gold.length };
  gold.forEach((g, i) => {
    const p = pred[i] ?? NONE;
    if (p === g) {
      c.correct += 1;
      if (g !== NONE) c.tp += 1;
      return;
    }
    if (g !== NONE) c.fn += 1;
    if (p !== NONE) c.fp += 1;
  });
  return c;
}

function percentile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

/**
 * Per-parse latency and sustained throughput, measured the same way for both engines: a full
 * garbage collection first (the heap left by training or by the other engine is not charged to
 * this one), 1,000 warm-up parses, then `runs` timed parses (an engine whose parse returns a
 * promise is awaited). Latency percentiles are per call. Throughput also counts the full
 * collection of what the timed parses left behind: an engine that leaves much garbage pays for
 * it later in any long run, and a short loop would otherwise not show it (here NLP.js's 3,000
 * parses leave ≈ 40 ms of collection, Parley's ≈ 4 ms).
 */
async function measureLatency(
  texts: readonly string[],
  parse: (t: string) => unknown,
  runs = 3000,
): Promise<{
  p50Us: number;
  p99Us: number;
  parsesPerSec: number;
}> {
  const collect = fullGc();
  for (let i = 0; i < 1000; i++) {
    const r = parse(texts[i % texts.length] ?? '');
    if (r instanceof Promise) await r;
  }
  collect();
  const samples: number[] = [];
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = parse(texts[i % texts.length] ?? '');
    if (r instanceof Promise) await r;
    samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  collect();
  const totalS = Number(process.hrtime.bigint() - start) / 1e9;
  samples.sort((a, b) => a - b);
  return {
    p50Us: percentile(samples, 0.5),
    p99Us: percentile(samples, 0.99),
    parsesPerSec: runs / totalS,
  };
}

/** A full, synchronous garbage collection (V8's gc(), exposed at run time). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => gc();
}

/**
 * Throughput of both engines measured alternately (ROUNDS rounds of PER_ROUND parses each, the
 * same texts in the same order), as parses per second of wall time and per second of this
 * process's CPU time: on the shared machine other processes preempt the bench, which wall time
 * counts and CPU time does not. Medians over the rounds, and the rounds Parley won (by CPU).
 * Each timed segment ends with a full garbage collection, so each engine pays for the garbage it
 * made itself instead of for the other engine's (a collection falls on whoever allocates next).
 * A full collection mostly marks the live heap (both engines' models and the corpora: 40–65 ms
 * on this machine, 15–20 µs per parse of a round), whoever ran before it; the `Net` figures
 * subtract the CPU of a second, idle collection run right after each segment's, leaving what the
 * segment's own garbage cost.
 */
async function interleavedThroughput(
  texts: readonly string[],
  parley: (t: string) => unknown,
  nlpjs: (t: string) => Promise<unknown>,
): Promise<{
  parley: number;
  nlpjs: number;
  parleyCpu: number;
  nlpjsCpu: number;
  parleyCpuNet: number;
  nlpjsCpuNet: number;
  parleyWins: number;
  rounds: number;
}> {
  const ROUNDS = 9;
  const PER_ROUND = 3000;
  const collect = fullGc();
  const wall = { p: [] as number[], n: [] as number[] };
  const cpu = { p: [] as number[], n: [] as number[] };
  const net = { p: [] as number[], n: [] as number[] };
  let wins = 0;
  const cpuUs = (): number => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  /** CPU µs of a full collection with no new garbage (run right after one). */
  const idleCollection = (): number => {
    const c = cpuUs();
    collect();
    return cpuUs() - c;
  };
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = process.hrtime.bigint();
    let c0 = cpuUs();
    for (let i = 0; i < PER_ROUND; i++) parley(texts[i % texts.length] ?? '');
    collect();
    wall.p.push(PER_ROUND / (Number(process.hrtime.bigint() - t0) / 1e9));
    const pUs = Math.max(1, cpuUs() - c0);
    const pc = PER_ROUND / (pUs / 1e6);
    const pNet = PER_ROUND / (Math.max(1, pUs - idleCollection()) / 1e6);
    t0 = process.hrtime.bigint();
    c0 = cpuUs();
    for (let i = 0; i < PER_ROUND; i++) await nlpjs(texts[i % texts.length] ?? '');
    collect();
    wall.n.push(PER_ROUND / (Number(process.hrtime.bigint() - t0) / 1e9));
    const nUs = Math.max(1, cpuUs() - c0);
    const nc = PER_ROUND / (nUs / 1e6);
    const nNet = PER_ROUND / (Math.max(1, nUs - idleCollection()) / 1e6);
    cpu.p.push(pc);
    cpu.n.push(nc);
    net.p.push(pNet);
    net.n.push(nNet);
    if (pc >= nc) wins += 1;
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;
  return {
    parley: median(wall.p),
    nlpjs: median(wall.n),
    parleyCpu: median(cpu.p),
    nlpjsCpu: median(cpu.n),
    parleyCpuNet: median(net.p),
    nlpjsCpuNet: median(net.n),
    parleyWins: wins,
    rounds: ROUNDS,
  };
}

function pipelineFromEnv(): ComponentConfig[] | null {
  const raw = process.env['PARLEY_PIPELINE'];
  if (raw) return JSON.parse(raw) as ComponentConfig[];
  const diet = process.env['PARLEY_DIET'];
  if (!diet) return null;
  const extra = JSON.parse(diet) as Record<string, unknown>;
  return DEFAULT_PIPELINE.map((c) => (c.name === 'DIETClassifier' ? { ...c, ...extra } : c));
}

async function runParley(
  train: NluTrainingData,
  test: readonly NluExample[],
): Promise<EngineResult & { model: TrainedNlu }> {
  const t0 = performance.now();
  const model = await trainNlu(
    train,
    { language: 'en', pipeline: pipelineFromEnv() },
    { seed: 42, ...THREADS },
  );
  const trainMs = performance.now() - t0;
  const gold = test.map((e) => e.intent);
  const pred: string[] = [];
  const ent = { tp: 0, fp: 0, fn: 0 };
  for (const ex of test) {
    const m = model.process(ex.text);
    const name = m.intent?.name ?? null;
    pred.push(name === null || name === 'nlu_fallback' ? NONE : name);
    const goldSpans = new Set(ex.entities.map((e) => `${e.start}:${e.end}:${e.entity}`));
    const predSpans = new Set(
      m.entities
        .filter((e) => e.extractor === 'DIETClassifier')
        .map((e) => `${e.start}:${e.end}:${e.entity}`),
    );
    for (const s of predSpans) {
      if (goldSpans.has(s)) ent.tp += 1;
      else ent.fp += 1;
    }
    for (const s of goldSpans) if (!predSpans.has(s)) ent.fn += 1;
  }
  const counts = scoreIntents(gold, pred);
  const latency = await measureLatency(
    test.map((e) => e.text),
    (t) => model.parse(t),
  );
  const hasEntities = train.examples.some((e) => e.entities.length > 0);
  return {
    model,
    intentAccuracy: counts.correct / counts.total,
    intentF1: f1(counts),
    counts,
    entityF1: hasEntities ? f1(ent) : null,
    entityCounts: hasEntities ? ent : null,
    trainMs,
    ...latency,
  };
}

interface NlpJsManager {
  addDocument(locale: string, utterance: string, intent: string): void;
  train(): Promise<void>;
  process(locale: string, utterance: string): Promise<{ intent: string; score: number }>;
}

async function runNlpJs(
  train: NluTrainingData,
  test: readonly NluExample[],
): Promise<EngineResult & { manager: NlpJsManager }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NlpManager } = require('node-nlp') as {
    NlpManager: new (settings: Record<string, unknown>) => NlpJsManager;
  };
  const manager = new NlpManager({
    languages: ['en'],
    autoSave: false,
    nlu: { log: false },
    forceNER: false,
  });
  for (const ex of train.examples) manager.addDocument('en', ex.text, ex.intent);
  const t0 = performance.now();
  await manager.train();
  const trainMs = performance.now() - t0;
  const gold = test.map((e) => e.intent);
  const pred: string[] = [];
  for (const ex of test) {
    const r = await manager.process('en', ex.text);
    pred.push(r.intent && r.intent !== 'None' ? r.intent : NONE);
  }
  const counts = scoreIntents(gold, pred);
  const latency = await measureLatency(
    test.map((e) => e.text),
    (t) => manager.process('en', t),
  );
  return {
    manager,
    intentAccuracy: counts.correct / counts.total,
    intentF1: f1(counts),
    counts,
    entityF1: null,
    entityCounts: null,
    trainMs,
    ...latency,
  };
}

/**
 * Seeded synthetic corpus: 150 intents × 100 utterances, some with a `city` entity; then
 * `noise` utterances of intent `oos` made of the same openers and filler words without any
 * intent's key words (the intents above are the same with or without them).
 */
export function syntheticCorpus(
  intents = 150,
  perIntent = 100,
  seed = 7,
  noise = 0,
): NluTrainingData {
  let s = seed >>> 0;
  const rnd = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const syll = [
    'ka',
    'lo',
    'mi',
    'ran',
    'te',
    'vos',
    'pu',
    'zel',
    'dor',
    'fi',
    'gan',
    'hu',
    'jer',
    'nox',
    'qua',
  ];
  const word = (): string =>
    Array.from({ length: 2 + Math.floor(rnd() * 2) }, () => pick(syll)).join('');
  const filler = Array.from({ length: 300 }, word);
  const cities = [
    'berlin',
    'paris',
    'new york',
    'tokyo',
    'lima',
    'oslo',
    'cairo',
    'san francisco',
    'delhi',
    'rome',
  ];
  const openers = ['please', 'can you', 'i want to', 'could you', 'help me', 'i need to', ''];
  const examples: NluExample[] = [];
  for (let i = 0; i < intents; i++) {
    const keys = Array.from({ length: 6 }, word);
    const withCity = i % 5 === 0;
    for (let j = 0; j < perIntent; j++) {
      const parts = [pick(openers), pick(keys), pick(filler), pick(keys), pick(filler)].filter(
        Boolean,
      );
      let text = parts.join(' ');
      const entities: NluExample['entities'][number][] = [];
      if (withCity && rnd() < 0.7) {
        const city = pick(cities);
        text = `${text} in ${city}`;
        const start = text.length - city.length;
        entities.push({ entity: 'city', start, end: text.length, value: city });
      }
      examples.push({ text, intent: `intent_${i}`, entities });
    }
  }
  for (let j = 0; j < noise; j++) {
    const parts = [pick(openers), pick(filler), pick(filler), pick(filler)].filter(Boolean);
    examples.push({ text: parts.join(' '), intent: 'oos', entities: [] });
  }
  return { examples, synonyms: {}, regexFeatures: [], lookupTables: [], responses: {} };
}

const fmt = (x: number | null, d = 3): string => (x === null ? '  n/a' : x.toFixed(d));

/** Intent micro-F1 (None excluded) and the model's hash, trained with `seed`. */
async function intentF1Of(
  train: NluTrainingData,
  test: readonly NluExample[],
  seed: number,
): Promise<{ f1: number; hash: string }> {
  const model = await trainNlu(
    train,
    { language: 'en', pipeline: pipelineFromEnv() },
    { seed, ...THREADS },
  );
  const pred = test.map((ex) => {
    const name = model.process(ex.text).intent?.name ?? null;
    return name === null || name === 'nlu_fallback' ? NONE : name;
  });
  const counts = scoreIntents(
    test.map((e) => e.intent),
    pred,
  );
  const hash = createHash('sha256')
    .update(JSON.stringify(model.toJSON()))
    .digest('hex')
    .slice(0, 12);
  return { f1: f1(counts), hash };
}

/** The examples in a seeded random order (Fisher–Yates on a small LCG). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Utterances no assistant is built for: keyboard mashing, foreign words, noise. */
const GIBBERISH = [
  'asdf qwerty zxcv',
  'lorem ipsum dolor sit amet',
  'jjjjjj kkkk',
  'xyzzy plugh',
  'qwertyuiop',
  'zzz',
  'blorp fleem gnarf',
  '12345 67890',
  'hjkl hjkl hjkl',
  'Wie spät ist es',
  'je ne sais pas',
  'ñandú pingüino',
  '??? !!!',
  'asdfghjkl;',
  'the the the the',
  'purple monkey dishwasher',
  'kthxbye lol rofl',
  'mnbvcxz poiuy',
  'fnord',
  'grblx wubba lubba',
];

/** Expected calibration error over 10 equal-width confidence bins. */
function expectedCalibrationError(points: ReadonlyArray<{ conf: number; right: boolean }>): number {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, conf: 0, right: 0 }));
  for (const p of points) {
    const bin = bins[Math.min(9, Math.floor(p.conf * 10))]!;
    bin.n += 1;
    bin.conf += p.conf;
    bin.right += p.right ? 1 : 0;
  }
  return bins.reduce(
    (sum, b) =>
      b.n === 0 ? sum : sum + (Math.abs(b.right - b.conf) / b.n) * (b.n / points.length),
    0,
  );
}

interface Judged {
  /** The best intent other than nlu_fallback, and its confidence. */
  readonly top: string | null;
  readonly conf: number;
  /** The confidence of the second-best intent (0 when there is none). */
  readonly second: number;
  /** Whether the FallbackClassifier answered nlu_fallback. */
  readonly fellBack: boolean;
}

function judge(model: TrainedNlu, text: string): Judged {
  const m = model.process(text);
  const ranked = (m.intentRanking ?? []).filter((r) => r.name !== 'nlu_fallback');
  const best = ranked[0] ?? null;
  return {
    top: best?.name ?? null,
    conf: best?.confidence ?? 0,
    second: ranked[1]?.confidence ?? 0,
    fellBack: m.intent?.name === 'nlu_fallback',
  };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.floor(s.length / 2)] ?? 0);
};

/** The trained out-of-scope intent of the synthetic set (CLINC150's name for it). */
const OOS = 'oos';

interface OosCase {
  readonly train: NluTrainingData;
  /** What the model is judged on: rows of the report sharing one trained model. */
  readonly rows: ReadonlyArray<{
    readonly name: string;
    /** Utterances of trained intents (gold `None` left out). */
    readonly inScope: readonly NluExample[];
    /** Utterances no trained intent covers. */
    readonly outOfScope: readonly string[];
  }>;
}

interface OosFigures {
  inScopeAccuracy: number;
  inScopeAccuracyAfterFallback: number;
  ece: number;
  oosRecall: number;
  oosCount: number;
  oosRankedFirst: number | null;
  gibberishRecall: number;
  medianConfidence: { inScope: number; oos: number; gibberish: number };
  /** The FallbackClassifier's rule at other thresholds (ambiguity 0.1), on the same answers. */
  sweep: ThresholdPoint[];
}

/** THRESHOLDS of the sweep: what a user who raises the FallbackClassifier threshold gets. */
const THRESHOLDS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] as const;
const AMBIGUITY = 0.1;

interface ThresholdPoint {
  readonly threshold: number;
  /** In-scope accuracy points lost to the fallback at this threshold. */
  readonly fallbackCost: number;
  /** Out-of-scope messages caught (fallback, or the trained `oos` intent). */
  readonly oosRecall: number;
}

/**
 * The FallbackClassifier's decision at `threshold` from a parse's intent ranking: the top
 * confidence under the threshold, or the top two within the ambiguity threshold of each other.
 */
const fallsBackAt = (j: Judged, threshold: number): boolean =>
  j.conf < threshold || j.conf - j.second < AMBIGUITY;

/**
 * What the default pipeline knows about what it does not know, for one training set: in-scope
 * top-intent accuracy, and that accuracy once the FallbackClassifier (0.3 / 0.1) has answered
 * nlu_fallback for some; the expected calibration error of the top confidence (10 bins); the
 * out-of-scope recall (answered nlu_fallback, or the trained `oos` intent where there is one),
 * and how often `oos` ranks first among the intents; the same recall for gibberish.
 */
async function oosFigures(c: OosCase): Promise<Array<OosFigures & { name: string }>> {
  const model = await trainNlu(
    c.train,
    { language: 'en', pipeline: pipelineFromEnv() },
    { seed: 42, ...THREADS },
  );
  const hasOos = c.train.examples.some((e) => e.intent === OOS);
  return c.rows.map((row) => ({ name: row.name, ...judgeCase(model, hasOos, row) }));
}

function judgeCase(model: TrainedNlu, hasOos: boolean, c: OosCase['rows'][number]): OosFigures {
  const caught = (j: Judged): boolean => j.fellBack || j.top === OOS;
  const judged = c.inScope.map((e) => ({ e, j: judge(model, e.text) }));
  const points = judged.map(({ e, j }) => ({ conf: j.conf, right: j.top === e.intent }));
  const acc = points.filter((p) => p.right).length / points.length;
  const accAfter =
    judged.filter(({ e, j }) => j.top === e.intent && !j.fellBack).length / judged.length;
  const oos = c.outOfScope.map((t) => judge(model, t));
  const gib = GIBBERISH.map((t) => judge(model, t));
  const sweep = THRESHOLDS.map((threshold) => ({
    threshold,
    fallbackCost:
      (judged.filter(({ e, j }) => j.top === e.intent && fallsBackAt(j, threshold)).length /
        judged.length) *
      100,
    oosRecall: oos.filter((j) => fallsBackAt(j, threshold) || j.top === OOS).length / oos.length,
  }));
  const med = [judged.map(({ j }) => j.conf), oos.map((j) => j.conf), gib.map((j) => j.conf)].map(
    median,
  );
  return {
    inScopeAccuracy: acc,
    inScopeAccuracyAfterFallback: accAfter,
    ece: expectedCalibrationError(points),
    oosRecall: oos.filter(caught).length / oos.length,
    oosCount: oos.length,
    oosRankedFirst: hasOos ? oos.filter((j) => j.top === OOS).length / oos.length : null,
    gibberishRecall: gib.filter(caught).length / gib.length,
    medianConfidence: { inScope: med[0] ?? 0, oos: med[1] ?? 0, gibberish: med[2] ?? 0 },
    sweep,
  };
}

/**
 * The out-of-scope cases: each Braun corpus trained alone, the other two corpora's test
 * utterances out of scope. Then the synthetic 150-intent set (100 training and 10 test
 * utterances per intent) with an `oos` intent trained on the first corpus's training
 * utterances and on 200 synthetic utterances of filler words only; out of scope are the other
 * corpora's test utterances (other domains, other words) and 200 fresh filler-only utterances
 * (the assistant's own words, no intent's key words).
 */
function oosCases(
  corpora: ReadonlyArray<{ name: string; train: NluTrainingData; test: readonly NluExample[] }>,
  synthetic: boolean,
): OosCase[] {
  const cases: OosCase[] = corpora.map((c) => ({
    train: c.train,
    rows: [
      {
        name: c.name,
        inScope: c.test.filter((e) => e.intent !== NONE),
        outOfScope: corpora
          .filter((o) => o.name !== c.name)
          .flatMap((o) => o.test.map((e) => e.text)),
      },
    ],
  }));
  if (synthetic) {
    const all = syntheticCorpus(150, 110, 7, 400);
    const train: NluExample[] = [];
    const test: NluExample[] = [];
    const noise: string[] = [];
    const seen = new Map<string, number>();
    for (const e of all.examples) {
      const n = seen.get(e.intent) ?? 0;
      seen.set(e.intent, n + 1);
      if (e.intent === OOS) {
        if (n < 200) train.push(e);
        else noise.push(e.text);
      } else (n < 100 ? train : test).push(e);
    }
    const [first, ...others] = corpora;
    for (const e of first?.train.examples ?? []) {
      train.push({ text: e.text, intent: OOS, entities: [] });
    }
    cases.push({
      train: { ...all, examples: train },
      rows: [
        {
          name: 'synthetic+oos, other corpora',
          inScope: test,
          outOfScope: others.flatMap((c) => c.test.map((e) => e.text)),
        },
        { name: 'synthetic+oos, filler words', inScope: test, outOfScope: noise },
      ],
    });
  }
  return cases;
}

async function oosReport(
  corpora: ReadonlyArray<{ name: string; train: NluTrainingData; test: readonly NluExample[] }>,
  synthetic: boolean,
): Promise<Record<string, OosFigures>> {
  const out: Record<string, OosFigures> = {};
  console.log(
    `${'case'.padEnd(30)}in-scope acc  after fallback  fallback cost  ECE     OOS recall (n)   oos first  gibberish recall  median conf: in-scope / OOS / gibberish`,
  );
  for (const c of oosCases(corpora, synthetic)) {
    for (const { name, ...f } of await oosFigures(c)) {
      const cost = (f.inScopeAccuracy - f.inScopeAccuracyAfterFallback) * 100;
      console.log(
        name.padEnd(30) +
          fmt(f.inScopeAccuracy).padEnd(14) +
          fmt(f.inScopeAccuracyAfterFallback).padEnd(16) +
          `${cost.toFixed(1).padStart(5)} pts`.padEnd(15) +
          fmt(f.ece).padEnd(8) +
          `${fmt(f.oosRecall)} (${f.oosCount})`.padEnd(17) +
          fmt(f.oosRankedFirst).padEnd(11) +
          fmt(f.gibberishRecall).padEnd(18) +
          [f.medianConfidence.inScope, f.medianConfidence.oos, f.medianConfidence.gibberish]
            .map((x) => fmt(x))
            .join(' / '),
      );
      out[name] = f;
    }
  }
  console.log(
    `\nfallback threshold sweep (ambiguity ${AMBIGUITY}): fallback cost in points / out-of-scope recall`,
  );
  console.log(`${'case'.padEnd(30)}${THRESHOLDS.map((t) => `${t}`.padEnd(14)).join('')}`);
  for (const [name, f] of Object.entries(out)) {
    console.log(
      name.padEnd(30) +
        f.sweep
          .map((p) => `${p.fallbackCost.toFixed(1)} / ${fmt(p.oosRecall)}`.padEnd(14))
          .join(''),
    );
  }
  return out;
}

const spread = (xs: readonly number[]): string => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return `mean ${mean.toFixed(3)}, min ${Math.min(...xs).toFixed(3)}, max ${Math.max(...xs).toFixed(3)}`;
};

export async function main(args: readonly string[]): Promise<void> {
  const skipNlpJs = args.includes('--skip-nlpjs');
  const skipSynthetic = args.includes('--skip-synthetic');
  const ordersAt = args.indexOf('--orders');
  const orders = ordersAt >= 0 ? Number(args[ordersAt + 1] ?? 5) : 0;
  if (args.includes('--oos') || args.includes('--calibration')) {
    const corpora = CORPORA.map((name) => {
      const file = join(SHARED, 'datasets', 'braun2017', `${name}.json`);
      const corpus = readBraunCorpus(readFileSync(file, 'utf8'), file);
      return { name, train: corpus.train, test: corpus.test.examples };
    });
    const report = await oosReport(corpora, !skipSynthetic);
    const outDir = join(ROOT, 'bench', 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'nlu-oos.json'), JSON.stringify(report, null, 2));
    return;
  }
  const results: Record<string, unknown> = {};
  const totals = { parley: { tp: 0, fp: 0, fn: 0 }, nlpjs: { tp: 0, fp: 0, fn: 0 } };
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  console.log(
    'corpus            engine   acc    intentF1 (tp/fp/fn)     entityF1 (tp/fp/fn)   train ms   p50 µs   p99 µs   parses/s',
  );
  for (const name of CORPORA) {
    const file = join(SHARED, 'datasets', 'braun2017', `${name}.json`);
    const corpus = readBraunCorpus(readFileSync(file, 'utf8'), file);
    const parley = await runParley(corpus.train, corpus.test.examples);
    const line = (engine: string, r: EngineResult): string =>
      `${name.padEnd(18)}${engine.padEnd(9)}${fmt(r.intentAccuracy)}  ${fmt(r.intentF1)} (${r.counts.tp}/${r.counts.fp}/${r.counts.fn})`.padEnd(
        55,
      ) +
      `${fmt(r.entityF1)} ${r.entityCounts ? `(${r.entityCounts.tp}/${r.entityCounts.fp}/${r.entityCounts.fn})` : ''}`.padEnd(
        22,
      ) +
      `${r.trainMs.toFixed(0).padStart(8)} ${r.p50Us.toFixed(1).padStart(8)} ${r.p99Us.toFixed(1).padStart(8)} ${r.parsesPerSec.toFixed(0).padStart(10)}`;
    console.log(line('parley', parley));
    totals.parley.tp += parley.counts.tp;
    totals.parley.fp += parley.counts.fp;
    totals.parley.fn += parley.counts.fn;
    const { model: _model, ...parleyResult } = parley;
    results[name] = { parley: parleyResult, unlocatedEntities: corpus.unlocatedEntities };
    if (orders > 0) {
      // The same examples in `orders` file orders (seed 42), then `orders` seeds (file order).
      const byOrder = [];
      for (let k = 1; k <= orders; k++) {
        const train = { ...corpus.train, examples: shuffled(corpus.train.examples, k) };
        byOrder.push(await intentF1Of(train, corpus.test.examples, 42));
      }
      const bySeed = [];
      for (let k = 1; k <= orders; k++) {
        bySeed.push(await intentF1Of(corpus.train, corpus.test.examples, 42 + k));
      }
      const models = new Set(byOrder.map((r) => r.hash)).size;
      console.log(
        `${''.padEnd(18)}intent F1 over ${orders} file orders: ${spread(byOrder.map((r) => r.f1))} (${models} distinct model${models === 1 ? '' : 's'}); over ${orders} seeds: ${spread(bySeed.map((r) => r.f1))}`,
      );
      (results[name] as Record<string, unknown>)['orders'] = { byOrder, bySeed };
    }
    if (!skipNlpJs) {
      const { manager, ...nlpjs } = await runNlpJs(corpus.train, corpus.test.examples);
      console.log(line('nlp.js', nlpjs));
      const tp = await interleavedThroughput(
        corpus.test.examples.map((e) => e.text),
        (t) => parley.model.parse(t),
        (t) => manager.process('en', t),
      );
      console.log(
        `${''.padEnd(18)}measured alternately (${tp.rounds} rounds, medians): parses per CPU-second parley ${tp.parleyCpu.toFixed(0)}, nlp.js ${tp.nlpjsCpu.toFixed(0)} (parley faster in ${tp.parleyWins}/${tp.rounds}); without the idle full collection's CPU parley ${tp.parleyCpuNet.toFixed(0)}, nlp.js ${tp.nlpjsCpuNet.toFixed(0)} (${(tp.parleyCpuNet / tp.nlpjsCpuNet).toFixed(2)}×); per wall-second parley ${tp.parley.toFixed(0)}, nlp.js ${tp.nlpjs.toFixed(0)}`,
      );
      (results[name] as Record<string, unknown>)['interleavedThroughput'] = tp;
      totals.nlpjs.tp += nlpjs.counts.tp;
      totals.nlpjs.fp += nlpjs.counts.fp;
      totals.nlpjs.fn += nlpjs.counts.fn;
      (results[name] as Record<string, unknown>)['nlpjs'] = nlpjs;
    }
  }
  console.log(
    `total intent micro-F1 (None excluded): parley ${fmt(f1(totals.parley))}` +
      (skipNlpJs ? '' : `, nlp.js ${fmt(f1(totals.nlpjs))}`),
  );
  results['totals'] = { parley: f1(totals.parley), nlpjs: skipNlpJs ? null : f1(totals.nlpjs) };

  const moodFile = join(process.cwd(), 'test', 'fixtures', 'moodbot', 'data', 'nlu.yml');
  const mood = readNluYaml(readFileSync(moodFile, 'utf8'), moodFile).data;
  const m0 = performance.now();
  await trainNlu(mood, { language: 'en', pipeline: null }, { seed: 42, ...THREADS });
  const moodMs = performance.now() - m0;
  console.log(
    `moodbot NLU (default pipeline, ${mood.examples.length} examples): trained in ${moodMs.toFixed(0)} ms`,
  );
  results['moodbot'] = { trainMs: moodMs, examples: mood.examples.length };

  if (!skipSynthetic) {
    const data = syntheticCorpus();
    let peakRss = process.memoryUsage().rss;
    const timer = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 50);
    const s0 = performance.now();
    let lastStage = '';
    const model = await trainNlu(
      data,
      { language: 'en', pipeline: null },
      {
        seed: 42,
        ...THREADS,
        onProgress: (stage) => {
          if (stage !== lastStage) {
            lastStage = stage;
            peakRss = Math.max(peakRss, process.memoryUsage().rss);
          }
        },
      },
    );
    const synMs = performance.now() - s0;
    clearInterval(timer);
    peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
    const lat = await measureLatency(
      data.examples.slice(0, 500).map((e) => e.text),
      (t) => model.parse(t),
      2000,
    );
    const json = JSON.stringify(model.toJSON());
    console.log(
      `synthetic ${data.examples.length} utterances / 150 intents (default pipeline, ${THREADS.threads ?? defaultTrainingThreads()} threads): trained in ${(synMs / 1000).toFixed(1)} s, ` +
        `peak RSS ${(peakRss / 1048576).toFixed(0)} MB, model JSON ${(json.length / 1048576).toFixed(1)} MB, ` +
        `parse p50 ${lat.p50Us.toFixed(1)} µs p99 ${lat.p99Us.toFixed(1)} µs, ` +
        `model sha256 ${createHash('sha256').update(json).digest('hex').slice(0, 12)} (the same for any thread count)`,
    );
    results['synthetic'] = {
      trainMs: synMs,
      peakRssMb: peakRss / 1048576,
      ...lat,
      modelJsonBytes: json.length,
    };
  }
  const outDir = join(ROOT, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'nlu-bench.json'), JSON.stringify(results, null, 2));
}
