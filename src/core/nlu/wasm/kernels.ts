import { KERNELS_WASM_BASE64 } from 'src/core/nlu/wasm/kernels-wasm';

/** The part of the WebAssembly API used here (not in the project's type libraries). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}
declare const WebAssembly: WasmApi | undefined;

type GatherRows = (
  w: number,
  stride: number,
  cols: number,
  vals: number,
  n: number,
  out: number,
) => void;

const PAGE = 65536;
let compiled: object | null | undefined;

/**
 * Whether parsing may use the WebAssembly kernels (default: yes where the runtime has 128-bit
 * SIMD). Tests and benches switch it off to compare with the plain JS path; a model checks it
 * when it builds its kernels (at its first parse).
 */
export const nluKernels = { enabled: true };

function kernelsModule(): object | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    const bytes = new Uint8Array(Buffer.from(KERNELS_WASM_BASE64, 'base64'));
    if (typeof WebAssembly === 'object' && WebAssembly.validate(bytes)) {
      compiled = new WebAssembly.Module(bytes);
    }
  } catch {
    compiled = null;
  }
  return compiled;
}

/** Whether the kernels can run here (and are enabled). */
export function kernelsAvailable(): boolean {
  return nluKernels.enabled && kernelsModule() !== null;
}

/**
 * A dense weight matrix (rows × width, f32) copied into its own WebAssembly memory, and the
 * product of a sparse row with it: out = Σᵢ vals[i] · W[cols[i]] (f32 SIMD, accumulated in f32,
 * so equal to the f64 JS loop up to float rounding, ~1e-6 relative). Callers fill `cols` and
 * `vals` (at most `rows` entries, each column in [0, rows)) and call `run`.
 */
export class SparseDenseProduct {
  readonly cols: Int32Array;
  readonly vals: Float32Array;
  private readonly out: Float32Array;

  private constructor(
    readonly rows: number,
    readonly width: number,
    private readonly stride: number,
    private readonly gather: GatherRows,
    private readonly offsets: { cols: number; vals: number; out: number },
    memory: WasmMemory,
  ) {
    this.cols = new Int32Array(memory.buffer, offsets.cols, rows);
    this.vals = new Float32Array(memory.buffer, offsets.vals, rows);
    this.out = new Float32Array(memory.buffer, offsets.out, stride);
  }

  /** null where WebAssembly SIMD is missing or the kernels are switched off. */
  static create(weights: Float32Array, rows: number, width: number): SparseDenseProduct | null {
    const module = kernelsAvailable() ? kernelsModule() : null;
    if (!module || typeof WebAssembly !== 'object' || rows <= 0 || width <= 0) return null;
    const stride = (width + 3) & ~3;
    const wBytes = rows * stride * 4;
    const cols = wBytes;
    const vals = cols + rows * 4;
    const out = (vals + rows * 4 + 15) & ~15;
    const total = out + stride * 4;
    if (total > 0x7fff0000) return null;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(total / PAGE) });
    const w = new Float32Array(memory.buffer, 0, rows * stride);
    if (stride === width) {
      w.set(weights.subarray(0, rows * width));
    } else {
      for (let r = 0; r < rows; r++) {
        w.set(weights.subarray(r * width, (r + 1) * width), r * stride);
      }
    }
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const gather = instance.exports['gatherRows'] as GatherRows;
    return new SparseDenseProduct(rows, width, stride, gather, { cols, vals, out }, memory);
  }

  /** target[0..width) = Σ_{i<n} vals[i] · W[cols[i]]. */
  run(n: number, target: Float64Array): void {
    const o = this.offsets;
    this.gather(0, this.stride, o.cols, o.vals, n, o.out);
    const out = this.out;
    for (let j = 0; j < this.width; j++) target[j] = out[j]!;
  }
}

/** Tags sharing one neighbour list, with their transition weights (see crf.ts). */
export interface CrfGroupSpec {
  readonly sources: Int32Array;
  readonly targets: Int32Array;
  /** targets × sources, row-major: transition scores and their exp. */
  readonly score: Float64Array;
  readonly exp: Float64Array;
}

type Viterbi = (
  T: number,
  K: number,
  e: number,
  score: number,
  back: number,
  gath: number,
  groups: number,
  ng: number,
) => void;
type Forward = (
  last: number,
  K: number,
  psi: number,
  alpha: number,
  gath: number,
  groups: number,
  ng: number,
) => void;
type ExpRows = (T: number, K: number, e: number, psi: number) => void;
type Backward = (
  T: number,
  first: number,
  K: number,
  psi: number,
  beta: number,
  gath: number,
  groups: number,
  ng: number,
) => void;

/**
 * The grouped Viterbi and scaled forward/backward recursions of LinearChainCrf.decode in
 * WebAssembly (f64x2: two tags of a group per vector, each tag's arithmetic in the JS order, so
 * the results are bit-identical). The rows (tokens × tags) live in the kernel's memory: the
 * caller fills `e` (and `psi`, row 0 of `alpha`, row T-1 of `beta`) and reads the others.
 * Sentences longer than `capacity` tokens use the JS path.
 */
export class CrfKernel {
  readonly e: Float64Array;
  readonly score: Float64Array;
  readonly psi: Float64Array;
  readonly alpha: Float64Array;
  readonly beta: Float64Array;
  readonly back: Int32Array;

  private constructor(
    readonly capacity: number,
    private readonly K: number,
    private readonly at: Record<
      'e' | 'score' | 'psi' | 'alpha' | 'beta' | 'back' | 'gath' | 'fwd' | 'bwd' | 'nf' | 'nb',
      number
    >,
    private readonly fns: {
      viterbi: Viterbi;
      forward: Forward;
      backward: Backward;
      expRows: ExpRows;
    },
    memory: WasmMemory,
  ) {
    const n = capacity * K;
    this.e = new Float64Array(memory.buffer, at.e, n);
    this.score = new Float64Array(memory.buffer, at.score, n);
    this.psi = new Float64Array(memory.buffer, at.psi, n);
    this.alpha = new Float64Array(memory.buffer, at.alpha, n);
    this.beta = new Float64Array(memory.buffer, at.beta, n);
    this.back = new Int32Array(memory.buffer, at.back, n);
  }

  /** null where WebAssembly SIMD is missing or the kernels are switched off. */
  static create(
    K: number,
    forward: readonly CrfGroupSpec[],
    backward: readonly CrfGroupSpec[],
  ): CrfKernel | null {
    const module = kernelsAvailable() ? kernelsModule() : null;
    if (!module || typeof WebAssembly !== 'object' || K <= 0) return null;
    const capacity = Math.max(32, Math.min(512, Math.floor((1 << 20) / (K * 44))));
    const align = (x: number): number => (x + 15) & ~15;
    // Group headers first (no row may sit at address 0: the kernel reads 0 as "none").
    const fwd = 64;
    const bwd = align(fwd + 32 * forward.length);
    let top = align(bwd + 32 * backward.length);
    const place = (groups: readonly CrfGroupSpec[]): Array<Record<string, number>> =>
      groups.map((g) => {
        const S = g.sources.length;
        const P = (g.targets.length + 1) >> 1;
        const src = top;
        const tgt = src + 4 * S;
        const score = align(tgt + 4 * g.targets.length);
        const exp = score + 16 * P * S;
        top = exp + 16 * P * S;
        return { src, tgt, score, exp };
      });
    const fPlaces = place(forward);
    const bPlaces = place(backward);
    // (16 bytes of padding after each: the exp kernel works on pairs of values)
    const rows = 8 * capacity * K + 16;
    const at = {
      fwd,
      bwd,
      nf: forward.length,
      nb: backward.length,
      gath: align(top),
      e: 0,
      score: 0,
      psi: 0,
      alpha: 0,
      beta: 0,
      back: 0,
    };
    at.e = align(at.gath + 8 * K);
    at.score = at.e + rows;
    at.psi = at.score + rows;
    at.alpha = at.psi + rows;
    at.beta = at.alpha + rows;
    at.back = at.beta + rows;
    const total = at.back + 4 * capacity * K;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(total / PAGE) });
    const i32 = new Int32Array(memory.buffer);
    const f64 = new Float64Array(memory.buffer);
    const write = (
      groups: readonly CrfGroupSpec[],
      places: Array<Record<string, number>>,
      headers: number,
    ): void => {
      groups.forEach((g, i) => {
        const p = places[i]!;
        const S = g.sources.length;
        const M = g.targets.length;
        const P = (M + 1) >> 1;
        i32.set(
          [S, M, P, p['src']!, p['tgt']!, p['score']!, p['exp']!, 0],
          (headers + 32 * i) >> 2,
        );
        i32.set(g.sources, p['src']! >> 2);
        i32.set(g.targets, p['tgt']! >> 2);
        for (let q = 0; q < P; q++) {
          for (let n = 0; n < S; n++) {
            for (let lane = 0; lane < 2; lane++) {
              const m = 2 * q + lane;
              const at2 = 2 * (q * S + n) + lane;
              f64[(p['score']! >> 3) + at2] = m < M ? g.score[m * S + n]! : -Infinity;
              f64[(p['exp']! >> 3) + at2] = m < M ? g.exp[m * S + n]! : 0;
            }
          }
        }
      });
    };
    write(forward, fPlaces, fwd);
    write(backward, bPlaces, bwd);
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const x = instance.exports;
    return new CrfKernel(
      capacity,
      K,
      at,
      {
        viterbi: x['viterbi'] as Viterbi,
        forward: x['forward'] as Forward,
        backward: x['backward'] as Backward,
        expRows: x['expRows'] as ExpRows,
      },
      memory,
    );
  }

  /** Viterbi recursion over positions 1..T-1 (row 0 of `score` set by the caller). */
  viterbi(T: number): void {
    const a = this.at;
    this.fns.viterbi(T, this.K, a.e, a.score, a.back, a.gath, a.fwd, a.nf);
  }

  /**
   * psi[t][k] = exp(e[t][k] − maxₖ e[t][k]) for t < T, with a vectorised exp within 2 ulp of
   * Math.exp (so marginals equal the JS path's to ~1e-15).
   */
  expRows(T: number): void {
    const a = this.at;
    this.fns.expRows(T, this.K, a.e, a.psi);
  }

  /** Scaled forward rows 1..last (row 0 of `alpha` set and normalised by the caller). */
  forward(last: number): void {
    const a = this.at;
    this.fns.forward(last, this.K, a.psi, a.alpha, a.gath, a.fwd, a.nf);
  }

  /** Scaled backward rows T-2 down to first (row T-1 of `beta` set by the caller). */
  backward(T: number, first: number): void {
    const a = this.at;
    this.fns.backward(T, first, this.K, a.psi, a.beta, a.gath, a.bwd, a.nb);
  }
}
