import { DialogueError } from 'src/core/errors/dialogue-error';
import { type SparseVector } from 'src/core/nlu/message';

export const EMPTY_VECTOR: SparseVector = { idx: [], val: [] };

/** Builds a sorted sparse vector from index → value counts. */
export function vectorFromCounts(counts: Map<number, number>): SparseVector {
  const sorted = new Int32Array(counts.size);
  let n = 0;
  for (const k of counts.keys()) sorted[n++] = k;
  sorted.sort();
  // Filled by push: packed (not holey) arrays, which the parse-time loops read faster.
  const idx: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const k = sorted[i]!;
    idx.push(k);
    val.push(counts.get(k) ?? 0);
  }
  return { idx, val };
}

let scratchValues = new Float64Array(1024);
let scratchMarks = new Uint8Array(1024);

/** Sum of sparse rows (dense scratch accumulator, indices sorted natively). */
export function sumRows(rows: readonly SparseVector[]): SparseVector {
  if (rows.length === 1 && rows[0]) return rows[0];
  let max = -1;
  for (const row of rows) {
    for (let i = 0; i < row.idx.length; i++) if (row.idx[i]! > max) max = row.idx[i]!;
  }
  if (max < 0) return { idx: [], val: [] };
  if (max >= scratchValues.length) {
    const size = Math.max(max + 1, scratchValues.length * 2);
    scratchValues = new Float64Array(size);
    scratchMarks = new Uint8Array(size);
  }
  const values = scratchValues;
  const marks = scratchMarks;
  const touched: number[] = [];
  for (const row of rows) {
    const { idx, val } = row;
    for (let i = 0; i < idx.length; i++) {
      const k = idx[i]!;
      if (marks[k] === 0) {
        marks[k] = 1;
        values[k] = 0;
        touched.push(k);
      }
      values[k] = values[k]! + val[i]!;
    }
  }
  const sorted = new Int32Array(touched.length);
  for (let i = 0; i < touched.length; i++) sorted[i] = touched[i]!;
  sorted.sort();
  const idx = new Array<number>(sorted.length);
  const val = new Array<number>(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    const k = sorted[i]!;
    idx[i] = k;
    val[i] = values[k]!;
    marks[k] = 0;
  }
  return { idx, val };
}

/** out[o..o+n) += v · w[b..b+n), unrolled by four (about 1.5× faster in V8 than a plain loop). */
export function axpy(
  out: Float64Array,
  o: number,
  w: Float32Array,
  b: number,
  v: number,
  n: number,
): void {
  let j = 0;
  for (; j + 3 < n; j += 4) {
    out[o + j] = out[o + j]! + v * w[b + j]!;
    out[o + j + 1] = out[o + j + 1]! + v * w[b + j + 1]!;
    out[o + j + 2] = out[o + j + 2]! + v * w[b + j + 2]!;
    out[o + j + 3] = out[o + j + 3]! + v * w[b + j + 3]!;
  }
  for (; j < n; j++) out[o + j] = out[o + j]! + v * w[b + j]!;
}

/** out[o..o+n) += src[0..n), unrolled by four. */
export function addInto(out: Float64Array, o: number, src: Float64Array, n: number): void {
  let j = 0;
  for (; j + 3 < n; j += 4) {
    out[o + j] = out[o + j]! + src[j]!;
    out[o + j + 1] = out[o + j + 1]! + src[j + 1]!;
    out[o + j + 2] = out[o + j + 2]! + src[j + 2]!;
    out[o + j + 3] = out[o + j + 3]! + src[j + 3]!;
  }
  for (; j < n; j++) out[o + j] = out[o + j]! + src[j]!;
}

/** Float32Array ↔ base64 (little-endian IEEE 754), for plain-JSON model state. */
export function encodeFloats(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

export function decodeFloats(encoded: unknown, expectedLength: number, what: string): Float32Array {
  if (typeof encoded !== 'string') {
    throw new DialogueError('NLU.INVALID_MODEL', `${what}: weights must be a base64 string`);
  }
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.byteLength !== expectedLength * 4) {
    throw new DialogueError(
      'NLU.INVALID_MODEL',
      `${what}: expected ${expectedLength} weights, found ${bytes.byteLength / 4}`,
    );
  }
  const out = new Float32Array(expectedLength);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** Narrowing helpers for loading JSON state. */
export function stateRecord(state: unknown, what: string): Record<string, unknown> {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new DialogueError('NLU.INVALID_MODEL', `${what}: state must be an object`);
  }
  return state as Record<string, unknown>;
}

export function stateStrings(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new DialogueError('NLU.INVALID_MODEL', `${what}: expected a list of strings`);
  }
  return value as string[];
}

export function stateNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new DialogueError('NLU.INVALID_MODEL', `${what}: expected a number`);
  }
  return value;
}
