import { type NluMessage, type SparseVector } from 'src/core/nlu/message';
import { sumRows } from 'src/core/nlu/sparse';

/** Dimensions of the feature blocks a classifier was trained on (pipeline order). */
export type FeatureLayout = readonly number[];

export function layoutOf(message: NluMessage): number[] {
  return message.features.map((b) => b.dim);
}

export function layoutWidth(layout: FeatureLayout): number {
  return layout.reduce((a, b) => a + b, 0);
}

/** How a sentence row's counts are damped before weighting and normalisation. */
export type TermFrequency = 'sqrt' | 'log' | 'binary' | 'raw';

export interface SentenceInputOptions {
  /** Per input column weight (idf), or null. */
  readonly weights?: Float32Array | null;
  readonly tf?: TermFrequency;
  /** Per block scale after L2 normalisation (0 drops the block); default 1 for every block. */
  readonly blockScale?: readonly number[] | null;
}

function damp(v: number, tf: TermFrequency): number {
  const a = Math.abs(v);
  if (tf === 'sqrt') return Math.sqrt(a);
  if (tf === 'log') return a > 0 ? 1 + Math.log(a) : 0;
  if (tf === 'binary') return a > 0 ? 1 : 0;
  return a;
}

/**
 * Sentence input of a classifier: per featurizer block its sentence row (or the sum of its
 * token rows), counts damped (sqrt by default), weighted, each block L2-normalised and scaled,
 * blocks concatenated.
 */
export function sentenceInput(
  message: NluMessage,
  layout: FeatureLayout,
  weightsOrOptions: Float32Array | null | SentenceInputOptions = null,
): SparseVector {
  const o: SentenceInputOptions =
    weightsOrOptions === null || weightsOrOptions instanceof Float32Array
      ? { weights: weightsOrOptions }
      : weightsOrOptions;
  const weights = o.weights ?? null;
  const tf = o.tf ?? 'sqrt';
  const idx: number[] = [];
  const val: number[] = [];
  let offset = 0;
  layout.forEach((dim, b) => {
    const block = message.features[b];
    const scale = o.blockScale ? (o.blockScale[b] ?? 1) : 1;
    if (block && block.dim === dim && scale > 0) {
      const row = block.sentence ?? sumRows(block.seq);
      const start = idx.length;
      let norm = 0;
      for (let i = 0; i < row.idx.length; i++) {
        const col = offset + (row.idx[i] ?? 0);
        const v = damp(row.val[i] ?? 0, tf) * (weights ? (weights[col] ?? 1) : 1);
        idx.push(col);
        val.push(v);
        norm += v * v;
      }
      norm = Math.sqrt(norm) / scale;
      if (norm > 0) for (let i = start; i < val.length; i++) val[i] = (val[i] ?? 0) / norm;
    }
    offset += dim;
  });
  return { idx, val };
}

/** Smoothed inverse document frequency of every input column over the given rows. */
export function inverseDocumentFrequency(
  rows: readonly SparseVector[],
  width: number,
): Float32Array {
  const df = new Float32Array(width);
  for (const r of rows) for (const i of r.idx) if (i < width) df[i] = (df[i] ?? 0) + 1;
  const n = rows.length;
  const out = new Float32Array(width);
  for (let i = 0; i < width; i++) out[i] = Math.log((1 + n) / (1 + (df[i] ?? 0))) + 1;
  return out;
}

/** Per token: the token's rows of every block, concatenated (values damped like above). */
export function tokenInputs(message: NluMessage, layout: FeatureLayout): SparseVector[] {
  return message.tokens.map((_, t) => {
    const idx: number[] = [];
    const val: number[] = [];
    let offset = 0;
    layout.forEach((dim, b) => {
      const block = message.features[b];
      const row = block && block.dim === dim ? block.seq[t] : undefined;
      if (row) {
        let norm = 0;
        for (const v of row.val) norm += Math.abs(v);
        norm = Math.sqrt(norm);
        for (let i = 0; i < row.idx.length; i++) {
          idx.push(offset + (row.idx[i] ?? 0));
          val.push(norm > 0 ? Math.sqrt(Math.abs(row.val[i] ?? 0)) / norm : 0);
        }
      }
      offset += dim;
    });
    return { idx, val };
  });
}

/** Appends extra binary features (ids relative to `offset`) to token rows. */
export function appendFeatures(
  rows: SparseVector[],
  extra: readonly number[][],
  offset: number,
): SparseVector[] {
  return rows.map((r, t) => {
    const ids = extra[t] ?? [];
    return { idx: [...r.idx, ...ids.map((i) => offset + i)], val: [...r.val, ...ids.map(() => 1)] };
  });
}

/** Neighbour-word context features for entity tagging: w[-2], w[-1], w[+1], w[+2], bias. */
export function contextKeys(message: NluMessage): string[][] {
  const words = message.tokens.map((t) => t.text.toLowerCase());
  return words.map((_, i) => {
    const keys = ['bias'];
    for (const d of [-2, -1, 1, 2]) {
      const w = words[i + d];
      keys.push(`w[${d}]=${w ?? (d < 0 ? '<BOS>' : '<EOS>')}`);
    }
    return keys;
  });
}
