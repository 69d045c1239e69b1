import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadNlu, trainNlu, type TrainedNlu } from 'src/core/nlu/pipeline';
import { Random } from 'src/core/nlu/random';
import {
  CrfKernel,
  kernelsAvailable,
  nluKernels,
  SparseDenseProduct,
} from 'src/core/nlu/wasm/kernels';
import { KERNELS_WASM_BASE64 } from 'src/core/nlu/wasm/kernels-wasm';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';
import wabt from 'wabt';

/** Runs `fn` with the kernels switched on or off, restoring the switch after. */
function withKernels<T>(enabled: boolean, fn: () => T): T {
  const before = nluKernels.enabled;
  nluKernels.enabled = enabled;
  try {
    return fn();
  } finally {
    nluKernels.enabled = before;
  }
}

describe('WebAssembly kernels', () => {
  it('embed the bytes that kernels.wat compiles to', async () => {
    const tools = await wabt();
    const wat = readFileSync(join(__dirname, 'kernels.wat'), 'utf8');
    const module = tools.parseWat('kernels.wat', wat, { simd: true });
    module.resolveNames();
    module.validate();
    const bytes = Buffer.from(module.toBinary({ write_debug_names: false }).buffer);
    module.destroy();
    expect(bytes.toString('base64')).toBe(KERNELS_WASM_BASE64);
  });

  it('are available on this runtime (Node has WebAssembly SIMD)', () => {
    expect(kernelsAvailable()).toBe(true);
  });

  it.each([
    [128, 40],
    [2, 7],
    [5, 1],
    [30, 25],
    [16, 0],
  ])('SparseDenseProduct (width %i, %i columns) equals the plain sum of rows', (width, n) => {
    const rng = new Random(width * 31 + n);
    const rows = 50;
    const weights = Float32Array.from({ length: rows * width }, () => rng.next() * 2 - 1);
    const product = SparseDenseProduct.create(weights, rows, width);
    if (!product) throw new Error('kernels unavailable');
    const expected = new Float64Array(width);
    const used = new Set<number>();
    for (let i = 0; i < n; i++) {
      let col = Math.floor(rng.next() * rows);
      while (used.has(col)) col = (col + 1) % rows;
      used.add(col);
      const v = rng.next() * 3;
      product.cols[i] = col;
      product.vals[i] = v;
      const vf = Math.fround(v);
      for (let j = 0; j < width; j++) expected[j] = expected[j]! + vf * weights[col * width + j]!;
    }
    const out = new Float64Array(width).fill(NaN);
    product.run(n, out);
    for (let j = 0; j < width; j++) expect(out[j]).toBeCloseTo(expected[j]!, 5);
  });

  it.each([
    [128, 2],
    [20, 7],
    [6, 150],
  ])(
    'SparseDenseProduct.runHidden (%i hidden, %i outputs) equals bias, ReLU and the next layer',
    (H, C) => {
      const rng = new Random(H + 7 * C);
      const rows = 40;
      const w1 = Float32Array.from({ length: rows * H }, () => rng.next() * 2 - 1);
      const bias = Float32Array.from({ length: H }, () => rng.next() - 0.5);
      const next = Float32Array.from({ length: H * C }, () => rng.next() * 2 - 1);
      const product = SparseDenseProduct.create(w1, rows, H, { bias, next, outputs: C });
      if (!product) throw new Error('kernels unavailable');
      const n = 12;
      const pre = new Float64Array(H);
      for (let i = 0; i < n; i++) {
        const col = (i * 7) % rows;
        product.cols[i] = col;
        product.vals[i] = rng.next();
        for (let j = 0; j < H; j++) pre[j] = pre[j]! + product.vals[i]! * w1[col * H + j]!;
      }
      const expected = new Float64Array(C);
      for (let j = 0; j < H; j++) {
        const h = Math.max(0, pre[j]! + bias[j]!);
        for (let c = 0; c < C; c++) expected[c] = expected[c]! + h * next[j * C + c]!;
      }
      const out = new Float64Array(C).fill(NaN);
      product.runHidden(n, out);
      for (let c = 0; c < C; c++) expect(out[c]).toBeCloseTo(expected[c]!, 4);
    },
  );

  describe('SentenceAssembly', () => {
    /** The JS definition: per block sqrt(Σ |v| per column) · scale / sqrt(Σ |v|). */
    function expected(
      blocks: Array<{
        offset: number;
        scale: number;
        rows: Array<{ idx: number[]; val: number[] }>;
      }>,
    ): Map<number, number> {
      const out = new Map<number, number>();
      for (const b of blocks) {
        const sums = new Map<number, number>();
        let total = 0;
        for (const r of b.rows) {
          r.idx.forEach((i, k) => {
            const c = Math.abs(r.val[k]!);
            total += c;
            sums.set(i, (sums.get(i) ?? 0) + c);
          });
        }
        for (const [i, c] of sums) {
          if (c > 0) {
            out.set(b.offset + i, Math.fround((Math.sqrt(c) * b.scale) / Math.sqrt(total)));
          }
        }
      }
      return out;
    }

    it('builds the summed, damped, normalised input from shared and one-off rows', () => {
      const weights = new Float32Array(30 * 4).fill(1);
      const product = SparseDenseProduct.create(weights, 30, 4);
      if (!product) throw new Error('kernels unavailable');
      const asm = product.assembly;
      const shared = { idx: [1, 4, 7], val: [1, 2, 1] };
      const blocks = [
        { offset: 0, scale: 1, rows: [shared, { idx: [4, 9], val: [3, 0] }, shared] },
        { offset: 12, scale: 0.5, rows: [{ idx: [0, 5], val: [-2, 1] }] },
      ];
      for (let round = 0; round < 3; round++) {
        asm.begin();
        blocks.forEach((b, bi) => {
          for (const r of b.rows) expect(asm.row(bi, r, r === shared)).toBe(true);
          expect(asm.closeBlock(b.offset, b.scale)).toBe(true);
        });
        const n = asm.finish();
        const got = new Map<number, number>();
        for (let i = 0; i < n; i++) got.set(product.cols[i]!, product.vals[i]!);
        expect(got).toEqual(expected(blocks));
      }
    });

    it('reports a full row store, and starts over after reset()', () => {
      const product = SparseDenseProduct.create(new Float32Array(50 * 4), 50, 4, null, 64);
      if (!product) throw new Error('kernels unavailable');
      const asm = product.assembly;
      const rows = Array.from({ length: 5 }, (_, i) => ({ idx: [i, i + 10], val: [1, 1] }));
      asm.begin();
      // 24 bytes a row: two fit in 64
      expect(rows.slice(0, 2).map((r) => asm.row(0, r, true))).toEqual([true, true]);
      expect(asm.row(0, rows[2]!, true)).toBe(false);
      asm.reset();
      asm.begin();
      expect(asm.row(0, rows[2]!, true)).toBe(true);
      expect(asm.closeBlock(0, 1)).toBe(true);
      expect(asm.finish()).toBe(2);
    });
  });

  it('CrfKernel.expRows matches Math.exp of each row minus its maximum (within 2 ulp above -708)', () => {
    const K = 5;
    const kernel = CrfKernel.create(K, [], []);
    if (!kernel) throw new Error('kernels unavailable');
    const rng = new Random(9);
    const values = [0, -1e-300, -0.5, -0.34657359, 0.34657359, -1, -20.25, -700, -708.5, -744];
    for (let i = 0; values.length < 7 * K; i++) values.push((rng.next() - 0.5) * 80);
    const T = values.length / K;
    kernel.e.set(values);
    kernel.expRows(T);
    for (let t = 0; t < T; t++) {
      const row = values.slice(t * K, (t + 1) * K);
      const max = Math.max(...row);
      row.forEach((v, k) => {
        const expected = Math.exp(v - max);
        const got = kernel.psi[t * K + k]!;
        if (v - max < -708) {
          // clamped: a tiny normal number instead of a subnormal (or 0)
          expect(got).toBeGreaterThanOrEqual(expected);
          expect(got).toBeLessThan(3.4e-308);
          return;
        }
        expect(Math.abs(got - expected)).toBeLessThanOrEqual(4.5e-16 * expected);
      });
    }
  });

  it('switched off, create() gives null (the callers use their JS path)', () => {
    expect(withKernels(false, () => SparseDenseProduct.create(new Float32Array(4), 2, 2))).toBe(
      null,
    );
  });

  describe('in a trained pipeline', () => {
    const data = readNluYaml(
      readFileSync(
        join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'nlu', 'small-nlu.yml'),
        'utf8',
      ),
      'small-nlu.yml',
    ).data;
    let model: TrainedNlu;
    beforeAll(async () => {
      model = await trainNlu(data, { language: 'en', pipeline: null }, { seed: 3 });
    });

    it.each([64, 4096])(
      'parse the same with a row store of %i bytes (full: starts over, or falls back to JS)',
      (bytes) => {
        const before = nluKernels.rowStoreBytes;
        nluKernels.rowStoreBytes = bytes;
        const small = loadNlu(JSON.parse(JSON.stringify(model.toJSON())));
        try {
          for (const e of [...data.examples, ...data.examples]) {
            const got = small.parse(e.text);
            const plain = withKernels(false, () => model.parse(e.text));
            expect(got.intent.name).toBe(plain.intent.name);
            expect(got.intent.confidence).toBeCloseTo(plain.intent.confidence, 5);
          }
        } finally {
          nluKernels.rowStoreBytes = before;
        }
      },
    );

    it('parse like the plain JS path (confidences within float rounding)', () => {
      // A loaded copy builds its kernels afresh; the trained model is compared with itself.
      const loaded = loadNlu(JSON.parse(JSON.stringify(model.toJSON())));
      const texts = [
        'book a flight from berlin to paris',
        'hello there',
        'fly me to new york tomorrow please',
        ...data.examples.slice(0, 20).map((e) => e.text),
      ];
      for (const text of texts) {
        const plain = withKernels(false, () => model.parse(text));
        for (const m of [model, loaded]) {
          const fast = withKernels(true, () => m.parse(text));
          expect(fast.intent.name).toBe(plain.intent.name);
          expect(fast.intent.confidence).toBeCloseTo(plain.intent.confidence, 5);
          expect(fast.intent_ranking.map((r) => r.name)).toEqual(
            plain.intent_ranking.map((r) => r.name),
          );
          expect(fast.entities.map((e) => [e.entity, e.start, e.end, e.role])).toEqual(
            plain.entities.map((e) => [e.entity, e.start, e.end, e.role]),
          );
          fast.entities.forEach((e, i) => {
            expect(e.confidence_entity).toBeCloseTo(plain.entities[i]!.confidence_entity!, 9);
          });
        }
      }
    });
  });
});
