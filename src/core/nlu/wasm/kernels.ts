import { type SparseVector } from 'src/core/nlu/message';
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
export const nluKernels = {
  enabled: true,
  /** Size of a SparseDenseProduct's store of token rows (SentenceAssembly), for new products. */
  rowStoreBytes: 2 << 20,
};

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

/**
 * A memory of at least `bytes`, or null when the runtime cannot reserve one (each WebAssembly
 * memory takes a large virtual address range; with very many models alive it can run out, and
 * the models then parse with their JS paths).
 */
function newMemory(bytes: number): WasmMemory | null {
  if (typeof WebAssembly !== 'object') return null;
  try {
    return new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE) });
  } catch {
    return null;
  }
}

/** Whether the kernels can run here (and are enabled). */
export function kernelsAvailable(): boolean {
  return nluKernels.enabled && kernelsModule() !== null;
}

type Mlp = (
  w1: number,
  stride1: number,
  cols: number,
  vals: number,
  n: number,
  pre: number,
  b1: number,
  H: number,
  w2: number,
  stride2: number,
  cols2: number,
  vals2: number,
  out: number,
) => void;

/** The hidden layer of a SparseDenseProduct: bias, ReLU, and the next layer's weights. */
export interface HiddenLayer {
  readonly bias: Float32Array;
  /** width × outputs, row-major. */
  readonly next: Float32Array;
  readonly outputs: number;
}

const align16 = (x: number): number => (x + 15) & ~15;
const stride4 = (x: number): number => (x + 3) & ~3;

/**
 * A dense weight matrix (rows × width, f32) copied into its own WebAssembly memory, and the
 * product of a sparse row with it: out = Σᵢ vals[i] · W[cols[i]] (f32 SIMD, accumulated in f32,
 * so equal to the f64 JS loop up to float rounding, ~1e-6 relative). Callers fill `cols` and
 * `vals` (at most `rows` entries, each column in [0, rows)) and call `run`; with a hidden layer,
 * `runHidden` goes on through bias, ReLU and the next layer.
 */
export class SparseDenseProduct {
  readonly cols: Int32Array;
  readonly vals: Float32Array;
  private readonly out: Float32Array;
  private readonly out2: Float32Array | null;

  private constructor(
    readonly rows: number,
    readonly width: number,
    private readonly outputs: number,
    private readonly at: Record<
      'stride' | 'cols' | 'vals' | 'out' | 'b1' | 'w2' | 'stride2' | 'cols2' | 'vals2' | 'out2',
      number
    >,
    private readonly fns: { gather: GatherRows; mlp: Mlp },
    memory: WasmMemory,
    /** Builds the input (cols/vals) from token rows inside the kernel (see SentenceAssembly). */
    readonly assembly: SentenceAssembly,
  ) {
    this.cols = new Int32Array(memory.buffer, at.cols, rows);
    this.vals = new Float32Array(memory.buffer, at.vals, rows);
    this.out = new Float32Array(memory.buffer, at.out, at.stride);
    this.out2 = at.w2 ? new Float32Array(memory.buffer, at.out2, at.stride2) : null;
  }

  /** null where WebAssembly SIMD is missing or the kernels are switched off. */
  static create(
    weights: Float32Array,
    rows: number,
    width: number,
    hidden: HiddenLayer | null = null,
    arenaBytes = nluKernels.rowStoreBytes,
  ): SparseDenseProduct | null {
    const module = kernelsAvailable() ? kernelsModule() : null;
    if (!module || typeof WebAssembly !== 'object' || rows <= 0 || width <= 0) return null;
    const stride = stride4(width);
    const stride2 = hidden ? stride4(hidden.outputs) : 0;
    const at = {
      stride,
      stride2,
      cols: 0,
      vals: 0,
      out: 0,
      b1: 0,
      w2: 0,
      cols2: 0,
      vals2: 0,
      out2: 0,
    };
    // the first layer's weights at 0, then the buffers (byte offsets)
    at.cols = rows * stride * 4;
    at.vals = at.cols + rows * 4;
    at.out = align16(at.vals + rows * 4);
    let total = at.out + stride * 4;
    if (hidden) {
      at.b1 = total;
      at.w2 = align16(at.b1 + stride * 4);
      at.cols2 = at.w2 + width * stride2 * 4;
      at.vals2 = at.cols2 + width * 4;
      at.out2 = align16(at.vals2 + width * 4);
      total = at.out2 + stride2 * 4;
    }
    const asm = {
      acc: align16(total),
      touched: 0,
      blocks: 0,
      rows: 0,
      temp: 0,
      arena: 0,
      end: 0,
    };
    asm.touched = asm.acc + 8 * rows;
    asm.blocks = align16(asm.touched + 4 * rows);
    asm.rows = asm.blocks + 24 * SentenceAssembly.maxBlocks;
    asm.temp = asm.rows + 8 * SentenceAssembly.maxRows;
    asm.arena = asm.temp + SentenceAssembly.tempBytes;
    asm.end = asm.arena + arenaBytes;
    total = asm.end;
    if (total > 0x7fff0000) return null;
    const memory = newMemory(total);
    if (!memory) return null;
    const copyRows = (
      src: Float32Array,
      n: number,
      w: number,
      ws: number,
      offset: number,
    ): void => {
      const dst = new Float32Array(memory.buffer, offset, n * ws);
      if (ws === w) {
        dst.set(src.subarray(0, n * w));
        return;
      }
      for (let r = 0; r < n; r++) dst.set(src.subarray(r * w, (r + 1) * w), r * ws);
    };
    copyRows(weights, rows, width, stride, 0);
    if (hidden) {
      new Float32Array(memory.buffer, at.b1, width).set(hidden.bias.subarray(0, width));
      copyRows(hidden.next, width, hidden.outputs, stride2, at.w2);
    }
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const fns = {
      gather: instance.exports['gatherRows'] as GatherRows,
      mlp: instance.exports['mlp'] as Mlp,
    };
    const assembly = new SentenceAssembly(
      memory,
      asm,
      { cols: at.cols, vals: at.vals, inputDim: rows },
      instance.exports['assemble'] as Assemble,
    );
    return new SparseDenseProduct(rows, width, hidden?.outputs ?? 0, at, fns, memory, assembly);
  }

  /** target[0..width) = Σ_{i<n} vals[i] · W[cols[i]]. */
  run(n: number, target: Float64Array): void {
    const a = this.at;
    this.fns.gather(0, a.stride, a.cols, a.vals, n, a.out);
    const out = this.out;
    for (let j = 0; j < this.width; j++) target[j] = out[j]!;
  }

  /**
   * With a hidden layer: target[0..outputs) = Σⱼ relu(preⱼ + biasⱼ) · next[j], where pre is
   * run's sum (f32 throughout; the caller adds the output bias).
   */
  runHidden(n: number, target: Float64Array): void {
    const a = this.at;
    const out2 = this.out2;
    if (!out2) throw new Error('SparseDenseProduct: no hidden layer');
    this.fns.mlp(
      0,
      a.stride,
      a.cols,
      a.vals,
      n,
      a.out,
      a.b1,
      this.width,
      a.w2,
      a.stride2,
      a.cols2,
      a.vals2,
      a.out2,
    );
    for (let c = 0; c < this.outputs; c++) target[c] = out2[c]!;
  }
}

type Assemble = (
  blocks: number,
  nb: number,
  rows: number,
  acc: number,
  touched: number,
  cols: number,
  vals: number,
  inputDim: number,
) => number;

/**
 * The input of a SparseDenseProduct assembled from token rows in the kernel (the kernels'
 * `assemble`): per block, the rows' values summed per column, each column's sqrt(sum) times
 * scale / sqrt(total) (DIET's sentence input, see predictWithProduct). Rows that are shared
 * objects (the featurizers' cached rows) are copied into the kernel's memory once and found
 * again by identity; other rows are copied per parse. When the row store is full it starts over
 * (the caller retries the message once).
 */
export class SentenceAssembly {
  static readonly maxBlocks = 64;
  static readonly maxRows = 8192;
  static readonly tempBytes = 1 << 18;
  private readonly f64: Float64Array;
  private readonly i32: Int32Array;
  private caches: Array<WeakMap<SparseVector, number> | undefined> = [];
  private top: number;
  private tempTop = 0;
  private rowCount = 0;
  private blockCount = 0;
  private blockStart = 0;

  constructor(
    memory: WasmMemory,
    private readonly at: Record<
      'acc' | 'touched' | 'blocks' | 'rows' | 'temp' | 'arena' | 'end',
      number
    >,
    private readonly target: { cols: number; vals: number; inputDim: number },
    private readonly assemble: Assemble,
  ) {
    this.f64 = new Float64Array(memory.buffer);
    this.i32 = new Int32Array(memory.buffer);
    this.top = at.arena;
  }

  /** Starts a message's input. */
  begin(): void {
    this.rowCount = 0;
    this.blockCount = 0;
    this.blockStart = 0;
    this.tempTop = this.at.temp;
  }

  /**
   * Adds a row to the current block (`cache` = the row object is shared and immutable, keyed
   * per `block`); false when there is no room (then reset() and start the message again).
   */
  row(block: number, row: SparseVector, cache: boolean): boolean {
    const len = row.idx.length;
    if (len === 0) return true;
    if (this.rowCount >= SentenceAssembly.maxRows) return false;
    let map = cache ? this.caches[block] : undefined;
    if (cache && !map) map = this.caches[block] = new WeakMap();
    let ptr = map?.get(row);
    if (ptr === undefined) {
      const bytes = (12 * len + 7) & ~7;
      if (map) {
        if (this.top + bytes > this.at.end) return false;
        ptr = this.top;
        this.top += bytes;
        map.set(row, ptr);
      } else {
        if (this.tempTop + bytes > this.at.arena) return false;
        ptr = this.tempTop;
        this.tempTop += bytes;
      }
      const f = ptr >> 3;
      const c = (ptr + 8 * len) >> 2;
      const { idx, val } = row;
      for (let k = 0; k < len; k++) {
        this.f64[f + k] = val[k]!;
        this.i32[c + k] = idx[k]!;
      }
    }
    const r = (this.at.rows >> 2) + 2 * this.rowCount;
    this.i32[r] = ptr;
    this.i32[r + 1] = len;
    this.rowCount += 1;
    return true;
  }

  /** Closes the current block: its columns start at `offset`, its values are scaled by `scale`. */
  closeBlock(offset: number, scale: number): boolean {
    if (this.blockCount >= SentenceAssembly.maxBlocks) return false;
    const h = this.at.blocks + 24 * this.blockCount;
    this.i32[h >> 2] = this.blockStart;
    this.i32[(h >> 2) + 1] = this.rowCount;
    this.i32[(h >> 2) + 2] = offset;
    this.f64[(h + 16) >> 3] = scale;
    this.blockCount += 1;
    this.blockStart = this.rowCount;
    return true;
  }

  /** Writes the product's cols/vals; returns how many. */
  finish(): number {
    const a = this.at;
    const t = this.target;
    return this.assemble(
      a.blocks,
      this.blockCount,
      a.rows,
      a.acc,
      a.touched,
      t.cols,
      t.vals,
      t.inputDim,
    );
  }

  /** Forgets every stored row (the store was full). */
  reset(): void {
    this.caches = [];
    this.top = this.at.arena;
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
 * given the same psi the recursions are bit-identical to the JS loops), and psi itself
 * (expRows, within 2 ulp of Math.exp). The rows (tokens × tags) live in the kernel's memory:
 * the caller fills `e` (and row 0 of `alpha`, row T-1 of `beta`, the start/end factors of
 * `psi`) and reads the others. Sentences longer than `capacity` tokens use the JS path.
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
    const memory = newMemory(total);
    if (!memory) return null;
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
