import { DialogueError } from 'src/core/errors/dialogue-error';
import { type SparseVector } from 'src/core/nlu/message';

export const EMPTY_VECTOR: SparseVector = { idx: [], val: [] };

/** Builds a sorted sparse vector from index → value counts. */
export function vectorFromCounts(counts: Map<number, number>): SparseVector {
  const idx = [...counts.keys()].sort((a, b) => a - b);
  return { idx, val: idx.map((i) => counts.get(i) ?? 0) };
}

/** Sum of sparse rows. */
export function sumRows(rows: readonly SparseVector[]): SparseVector {
  if (rows.length === 1 && rows[0]) return rows[0];
  const counts = new Map<number, number>();
  for (const row of rows) {
    for (let i = 0; i < row.idx.length; i++) {
      const k = row.idx[i] ?? 0;
      counts.set(k, (counts.get(k) ?? 0) + (row.val[i] ?? 0));
    }
  }
  return vectorFromCounts(counts);
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
