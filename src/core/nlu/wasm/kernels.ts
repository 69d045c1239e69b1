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
