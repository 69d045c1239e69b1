import { DialogueError } from 'src/core/errors/dialogue-error';
import { type SparseVector } from 'src/core/nlu/message';
import { Random } from 'src/core/nlu/random';
import { axpy, decodeFloats, encodeFloats, stateNumber, stateRecord } from 'src/core/nlu/sparse';
import { SparseDenseProduct } from 'src/core/nlu/wasm/kernels';

export interface SoftmaxTrainOptions {
  readonly inputDim: number;
  readonly classes: number;
  /** 0 = linear softmax regression; > 0 = one ReLU hidden layer of that size. */
  readonly hidden: number;
  readonly epochs: number;
  readonly learningRate: number;
  readonly l2: number;
  readonly dropRate: number;
  readonly batchSizes: readonly [number, number];
  readonly seed: number;
  /** Stop when the epoch loss improved by less than this (relative) for `patience` epochs. */
  readonly tolerance: number;
  readonly patience: number;
  /** Weight each example by N / (classes × count of its class), like Rasa's balanced batching. */
  readonly balanced?: boolean;
  /**
   * With at least this many examples, hold out 10% (seeded) and stop when the held-out loss has
   * not improved for `patience` epochs (default 1000; 0 disables).
   */
  readonly validationFrom?: number;
  /** Label smoothing ε: targets are (1 − ε)·one-hot + ε / classes. */
  readonly labelSmoothing?: number;
  /**
   * Temperature scaling (Guo et al., 2017): after training, fit one temperature T so that
   * softmax(logits / T) minimises the negative log-likelihood of examples the model did not
   * learn from. Confidences then mean what they say on unseen data; the ranking does not change.
   * With a hold-out (`validationFrom`), T is fitted on it. Without one (a small training set),
   * on the logits of a stratified `CALIBRATION_FOLDS`-fold cross-validation: each fold is
   * predicted by a model trained the same way on the other folds. The fold models cost about
   * twice the model's own training time again.
   */
  readonly calibrate?: boolean;
  /**
   * Called after each epoch. The cross-validation models of `calibrate` report each of their
   * epochs as the last epoch (`epochs - 1`, loss NaN): progress stays where the model's own
   * training ended, and a caller that yields on its epochs keeps yielding.
   */
  readonly onEpoch?: (epoch: number, loss: number) => void | Promise<void>;
}

/**
 * How far temperature scaling may sharpen (logits × 2 at most). The held-out examples are all
 * in scope: when the model gets every one of them right, their likelihood grows without end as
 * T falls, and nothing in them says what that does to out-of-scope messages (with T → 0, any
 * message of known words would reach its top intent at a confidence near 1).
 */
export const MIN_TEMPERATURE = 0.5;

/** Folds of the cross-validation that calibrates a model trained without a hold-out. */
export const CALIBRATION_FOLDS = 3;

/**
 * A sparse-input softmax classifier (optionally with one hidden layer) trained with lazy Adam:
 * only weight rows of features present in a batch are updated, so cost follows non-zeros.
 */
export class SoftmaxModel {
  private constructor(
    readonly inputDim: number,
    readonly hidden: number,
    readonly classes: number,
    /** inputDim × (hidden || classes), feature-major. */
    readonly w1: Float32Array,
    readonly b1: Float32Array,
    /** hidden × classes (empty when linear). */
    readonly w2: Float32Array,
    readonly b2: Float32Array,
    /** The softmax temperature (1: none; see SoftmaxTrainOptions.calibrate). */
    private temperatureValue = 1,
  ) {}

  static create(inputDim: number, hidden: number, classes: number, seed: number): SoftmaxModel {
    const rng = new Random(seed);
    const width = hidden > 0 ? hidden : classes;
    const w1 = new Float32Array(inputDim * width);
    if (hidden > 0) {
      const scale = Math.sqrt(2 / Math.max(1, Math.min(inputDim, 200)));
      for (let i = 0; i < w1.length; i++) w1[i] = rng.normal() * scale * 0.5;
    }
    const w2 = new Float32Array(hidden > 0 ? hidden * classes : 0);
    const s2 = Math.sqrt(2 / Math.max(1, hidden));
    for (let i = 0; i < w2.length; i++) w2[i] = rng.normal() * s2 * 0.5;
    return new SoftmaxModel(
      inputDim,
      hidden,
      classes,
      w1,
      new Float32Array(width),
      w2,
      new Float32Array(hidden > 0 ? classes : 0),
    );
  }

  /** Class probabilities for one input row. */
  predict(x: SparseVector): Float64Array {
    const probs = new Float64Array(this.classes);
    if (this.hidden > 0) {
      const h = this.hiddenActivations(x);
      this.outputFromHidden(h, probs);
    } else {
      this.linearLogits(x, probs);
    }
    softmaxInPlace(probs, this.temperatureValue);
    return probs;
  }

  private product: SparseDenseProduct | null | undefined;

  /**
   * The first layer as a WebAssembly sparse × dense product (built at first use, from the
   * trained weights); null where the kernels are unavailable.
   */
  firstLayerProduct(): SparseDenseProduct | null {
    if (this.product === undefined) {
      this.product = SparseDenseProduct.create(
        this.w1,
        this.inputDim,
        this.firstLayerWidth,
        this.hidden > 0 ? { bias: this.b1, next: this.w2, outputs: this.classes } : null,
      );
    }
    return this.product;
  }

  /** Width of the first layer (hidden units, or classes when linear). */
  get firstLayerWidth(): number {
    return this.hidden > 0 ? this.hidden : this.classes;
  }

  /** out += v · (first-layer weights of input column f); columns past inputDim are ignored. */
  addInputColumn(out: Float64Array, f: number, v: number): void {
    if (f >= this.inputDim || f < 0) return;
    const width = this.firstLayerWidth;
    axpy(out, 0, this.w1, f * width, v, width);
  }

  /**
   * Class probabilities from a precomputed first-layer product W1ᵀx (without bias): predict(x)
   * for callers that assemble W1ᵀx from cached parts. `pre` is overwritten.
   */
  predictFromFirstLayer(pre: Float64Array): Float64Array {
    const probs = new Float64Array(this.classes);
    if (this.hidden > 0) {
      for (let j = 0; j < this.hidden; j++) {
        const v = pre[j]! + this.b1[j]!;
        pre[j] = v > 0 ? v : 0;
      }
      this.outputFromHidden(pre, probs);
    } else {
      for (let c = 0; c < this.classes; c++) probs[c] = pre[c]! + this.b1[c]!;
    }
    softmaxInPlace(probs, this.temperatureValue);
    return probs;
  }

  /**
   * Class probabilities from firstLayerProduct() once the caller has filled its input
   * (`n` entries): predictFromFirstLayer without leaving WebAssembly between the layers.
   */
  predictFromProduct(product: SparseDenseProduct, n: number): Float64Array {
    const probs = new Float64Array(this.classes);
    if (this.hidden > 0) {
      product.runHidden(n, probs);
      for (let c = 0; c < this.classes; c++) probs[c] = probs[c]! + this.b2[c]!;
    } else {
      product.run(n, probs);
      for (let c = 0; c < this.classes; c++) probs[c] = probs[c]! + this.b1[c]!;
    }
    softmaxInPlace(probs, this.temperatureValue);
    return probs;
  }

  /** The output layer before the softmax, for one input row. */
  private logits(x: SparseVector): Float64Array {
    const out = new Float64Array(this.classes);
    if (this.hidden > 0) this.outputFromHidden(this.hiddenActivations(x), out);
    else this.linearLogits(x, out);
    return out;
  }

  /**
   * The temperature that minimises the negative log-likelihood of `labels` under
   * softmax(logits / T): golden-section search on log T over [MIN_TEMPERATURE, 20]. The NLL
   * is convex in 1/T (a log-sum-exp of scaled logits minus a linear term), so unimodal in log T.
   */
  private static fitTemperature(
    logits: readonly Float64Array[],
    labels: readonly number[],
  ): number {
    const nll = (t: number): number => {
      let total = 0;
      for (let r = 0; r < logits.length; r++) {
        const z = logits[r] as Float64Array;
        let max = -Infinity;
        for (let c = 0; c < z.length; c++) if (z[c]! > max) max = z[c]!;
        let sum = 0;
        for (let c = 0; c < z.length; c++) sum += Math.exp((z[c]! - max) / t);
        total += Math.log(sum) - (z[labels[r] ?? 0]! - max) / t;
      }
      return total / Math.max(1, logits.length);
    };
    const phi = (Math.sqrt(5) - 1) / 2;
    let lo = Math.log(MIN_TEMPERATURE);
    let hi = Math.log(20);
    let a = hi - phi * (hi - lo);
    let b = lo + phi * (hi - lo);
    let fa = nll(Math.exp(a));
    let fb = nll(Math.exp(b));
    for (let i = 0; i < 40; i++) {
      if (fa <= fb) {
        hi = b;
        b = a;
        fb = fa;
        a = hi - phi * (hi - lo);
        fa = nll(Math.exp(a));
      } else {
        lo = a;
        a = b;
        fa = fb;
        b = lo + phi * (hi - lo);
        fb = nll(Math.exp(b));
      }
    }
    const t = Math.exp((lo + hi) / 2);
    // No better than T = 1 (a flat or degenerate hold-out): keep the model as trained.
    return nll(t) < nll(1) ? t : 1;
  }

  private linearLogits(x: SparseVector, out: Float64Array): void {
    const C = this.classes;
    const w = this.w1;
    const D = this.inputDim;
    for (let c = 0; c < C; c++) out[c] = this.b1[c]!;
    const { idx, val } = x;
    for (let n = 0; n < idx.length; n++) {
      const f = idx[n]!;
      if (f >= D) continue;
      axpy(out, 0, w, f * C, val[n]!, C);
    }
  }

  private hiddenActivations(x: SparseVector): Float64Array {
    const H = this.hidden;
    const w = this.w1;
    const D = this.inputDim;
    const h = new Float64Array(H);
    for (let j = 0; j < H; j++) h[j] = this.b1[j]!;
    const { idx, val } = x;
    for (let n = 0; n < idx.length; n++) {
      const f = idx[n]!;
      if (f >= D) continue;
      axpy(h, 0, w, f * H, val[n]!, H);
    }
    for (let j = 0; j < H; j++) if (h[j]! < 0) h[j] = 0;
    return h;
  }

  private outputFromHidden(h: Float64Array, out: Float64Array): void {
    const C = this.classes;
    const w = this.w2;
    for (let c = 0; c < C; c++) out[c] = this.b2[c]!;
    for (let j = 0; j < this.hidden; j++) {
      const hj = h[j]!;
      if (hj === 0) continue;
      axpy(out, 0, w, j * C, hj, C);
    }
  }

  /** Trains a fresh model; resolves to it. */
  static async train(
    rows: readonly SparseVector[],
    labels: readonly number[],
    o: SoftmaxTrainOptions,
  ): Promise<SoftmaxModel> {
    const model = SoftmaxModel.create(o.inputDim, o.hidden, o.classes, o.seed);
    const heldOut = await model.fit(rows, labels, o);
    if (o.calibrate && heldOut.length > 0) {
      model.temperatureValue = SoftmaxModel.fitTemperature(
        heldOut.map((r) => model.logits(rows[r] as SparseVector)),
        heldOut.map((r) => labels[r] ?? 0),
      );
    } else if (o.calibrate) {
      const folds = await SoftmaxModel.crossValidatedLogits(rows, labels, o);
      if (folds) model.temperatureValue = SoftmaxModel.fitTemperature(folds.logits, folds.labels);
    }
    return model;
  }

  /**
   * The logits of every row from a model that did not train on it: rows are dealt into
   * CALIBRATION_FOLDS stratified folds (each class's rows shuffled with the seed, then dealt in
   * turn), and each fold is predicted by a model trained with the same options on the others.
   * Null when the set is too small to split (fewer than two rows per fold, or one class).
   */
  private static async crossValidatedLogits(
    rows: readonly SparseVector[],
    labels: readonly number[],
    o: SoftmaxTrainOptions,
  ): Promise<{ logits: Float64Array[]; labels: number[] } | null> {
    const k = CALIBRATION_FOLDS;
    if (rows.length < 2 * k || new Set(labels).size < 2) return null;
    const rng = new Random(o.seed ^ 0x2545f491);
    const byClass = new Map<number, number[]>();
    labels.forEach((y, r) => {
      const members = byClass.get(y);
      if (members) members.push(r);
      else byClass.set(y, [r]);
    });
    const fold = new Int32Array(rows.length);
    let dealt = 0;
    for (const y of [...byClass.keys()].sort((a, b) => a - b)) {
      for (const r of rng.shuffle(byClass.get(y) ?? [])) fold[r] = dealt++ % k;
    }
    const last = o.epochs - 1;
    const foldOptions: SoftmaxTrainOptions = {
      ...o,
      calibrate: false,
      onEpoch: o.onEpoch ? (): void | Promise<void> => o.onEpoch?.(last, Number.NaN) : undefined,
    };
    const logits: Float64Array[] = [];
    const gold: number[] = [];
    for (let f = 0; f < k; f++) {
      const train = rows.flatMap((_, r) => (fold[r] === f ? [] : [r]));
      const model = await SoftmaxModel.train(
        train.map((r) => rows[r] as SparseVector),
        train.map((r) => labels[r] ?? 0),
        { ...foldOptions, seed: o.seed + 7919 * (f + 1) },
      );
      rows.forEach((row, r) => {
        if (fold[r] !== f) return;
        logits.push(model.logits(row));
        gold.push(labels[r] ?? 0);
      });
    }
    return { logits, labels: gold };
  }

  /** Trains this model in place; resolves to the rows held out (none for a small set). */
  private async fit(
    rows: readonly SparseVector[],
    labels: readonly number[],
    o: SoftmaxTrainOptions,
  ): Promise<readonly number[]> {
    const rng = new Random(o.seed ^ 0x5bd1e995);
    const H = this.hidden;
    const C = this.classes;
    const width = H > 0 ? H : C;
    const m1 = new Float32Array(this.w1.length);
    const v1 = new Float32Array(this.w1.length);
    const mb1 = new Float32Array(this.b1.length);
    const vb1 = new Float32Array(this.b1.length);
    const m2 = new Float32Array(this.w2.length);
    const v2 = new Float32Array(this.w2.length);
    const mb2 = new Float32Array(this.b2.length);
    const vb2 = new Float32Array(this.b2.length);
    const beta1 = 0.9;
    const beta2 = 0.999;
    const eps = 1e-8;
    let step = 0;
    let order = rows.map((_, i) => i);
    let heldOut: number[] = [];
    if (rows.length >= (o.validationFrom ?? 1000) && (o.validationFrom ?? 1000) > 0) {
      rng.shuffle(order);
      const cut = Math.max(1, Math.floor(order.length * 0.1));
      heldOut = order.slice(0, cut);
      order = order.slice(cut);
    }
    // Gradient accumulators (dense over touched rows, tracked by a touched list).
    const g1 = new Float32Array(this.w1.length);
    const touchedMark = new Uint8Array(this.inputDim);
    const gb1 = new Float64Array(width);
    const g2 = new Float64Array(this.w2.length);
    const gb2 = new Float64Array(this.b2.length);
    const logits = new Float64Array(C);
    const dh = new Float64Array(H);
    let best = Infinity;
    let stale = 0;
    // The best held-out epoch's weights (early stopping restores them).
    const snapshot = heldOut.length ? new WeightSnapshot() : null;
    const keep = 1 - o.dropRate;
    const smooth = o.labelSmoothing ?? 0;
    const classCounts = new Float64Array(C);
    for (const y of labels) classCounts[y] = (classCounts[y] ?? 0) + 1;
    const present = classCounts.filter((n) => n > 0).length || 1;
    const classWeight = Array.from(classCounts, (n) =>
      o.balanced === false || n === 0 ? 1 : rows.length / (present * n),
    );

    for (let epoch = 0; epoch < o.epochs; epoch++) {
      rng.shuffle(order);
      const frac = o.epochs > 1 ? epoch / (o.epochs - 1) : 0;
      const batchSize = Math.max(
        1,
        Math.round(o.batchSizes[0] + (o.batchSizes[1] - o.batchSizes[0]) * frac),
      );
      let epochLoss = 0;
      for (let startIdx = 0; startIdx < order.length; startIdx += batchSize) {
        const batch = order.slice(startIdx, startIdx + batchSize);
        const touched: number[] = [];
        gb1.fill(0);
        g2.fill(0);
        gb2.fill(0);
        for (const r of batch) {
          const row = rows[r];
          const y = labels[r] ?? 0;
          if (!row) continue;
          // input dropout
          const idx: number[] = [];
          const val: number[] = [];
          for (let n = 0; n < row.idx.length; n++) {
            if (o.dropRate > 0 && rng.next() >= keep) continue;
            const f = row.idx[n] ?? 0;
            if (f >= this.inputDim) continue;
            idx.push(f);
            val.push((row.val[n] ?? 0) / keep);
            if (!touchedMark[f]) {
              touchedMark[f] = 1;
              touched.push(f);
            }
          }
          const x = { idx, val };
          let h: Float64Array | null = null;
          if (H > 0) {
            h = this.hiddenActivations(x);
            this.outputFromHidden(h, logits);
          } else this.linearLogits(x, logits);
          softmaxInPlace(logits);
          epochLoss -= Math.log(Math.max(logits[y] ?? 0, 1e-12));
          logits[y] = (logits[y] ?? 0) - 1; // dL/dlogits
          if (smooth > 0) {
            for (let c = 0; c < C; c++) {
              logits[c] = (logits[c] ?? 0) + smooth * ((c === y ? 1 : 0) - 1 / C);
            }
          }
          const cw = classWeight[y] ?? 1;
          if (cw !== 1) for (let c = 0; c < C; c++) logits[c] = (logits[c] ?? 0) * cw;
          if (H > 0 && h) {
            dh.fill(0);
            for (let j = 0; j < H; j++) {
              const hj = h[j] ?? 0;
              const base = j * C;
              let acc = 0;
              for (let c = 0; c < C; c++) {
                const d = logits[c] ?? 0;
                if (hj !== 0) g2[base + c] = (g2[base + c] ?? 0) + hj * d;
                acc += d * (this.w2[base + c] ?? 0);
              }
              dh[j] = hj > 0 ? acc : 0;
            }
            for (let c = 0; c < C; c++) gb2[c] = (gb2[c] ?? 0) + (logits[c] ?? 0);
            for (let j = 0; j < H; j++) gb1[j] = (gb1[j] ?? 0) + (dh[j] ?? 0);
            for (let n = 0; n < idx.length; n++) {
              const base = (idx[n] ?? 0) * H;
              const v = val[n] ?? 0;
              for (let j = 0; j < H; j++) g1[base + j] = (g1[base + j] ?? 0) + v * (dh[j] ?? 0);
            }
          } else {
            for (let c = 0; c < C; c++) gb1[c] = (gb1[c] ?? 0) + (logits[c] ?? 0);
            for (let n = 0; n < idx.length; n++) {
              const base = (idx[n] ?? 0) * C;
              const v = val[n] ?? 0;
              for (let c = 0; c < C; c++) g1[base + c] = (g1[base + c] ?? 0) + v * (logits[c] ?? 0);
            }
          }
        }
        step += 1;
        const scale = 1 / batch.length;
        const lr = (o.learningRate * Math.sqrt(1 - beta2 ** step)) / (1 - beta1 ** step);
        const adam = (
          w: Float32Array,
          m: Float32Array,
          v: Float32Array,
          i: number,
          grad: number,
        ): void => {
          const mi = beta1 * (m[i] ?? 0) + (1 - beta1) * grad;
          const vi = beta2 * (v[i] ?? 0) + (1 - beta2) * grad * grad;
          m[i] = mi;
          v[i] = vi;
          w[i] = (w[i] ?? 0) - (lr * mi) / (Math.sqrt(vi) + eps);
        };
        for (const f of touched) {
          touchedMark[f] = 0;
          const base = f * width;
          for (let k = 0; k < width; k++) {
            const i = base + k;
            const grad = (g1[i] ?? 0) * scale + o.l2 * (this.w1[i] ?? 0);
            g1[i] = 0;
            adam(this.w1, m1, v1, i, grad);
          }
        }
        for (let k = 0; k < width; k++) adam(this.b1, mb1, vb1, k, (gb1[k] ?? 0) * scale);
        for (let i = 0; i < this.w2.length; i++) {
          adam(this.w2, m2, v2, i, (g2[i] ?? 0) * scale + o.l2 * (this.w2[i] ?? 0));
        }
        for (let c = 0; c < this.b2.length; c++) adam(this.b2, mb2, vb2, c, (gb2[c] ?? 0) * scale);
      }
      let loss = epochLoss / Math.max(1, order.length);
      if (heldOut.length) {
        loss = 0;
        for (const r of heldOut) {
          const row = rows[r];
          if (row) loss -= Math.log(Math.max(this.predict(row)[labels[r] ?? 0] ?? 0, 1e-12));
        }
        loss /= heldOut.length;
      }
      if (o.onEpoch) await o.onEpoch(epoch, loss);
      // On held-out data (large training sets) a plateau is judged within 3 epochs at most, with
      // the configured tolerance; the best epoch's weights are restored below.
      const patience = heldOut.length ? Math.min(o.patience, 3) : o.patience;
      if (loss < best * (1 - o.tolerance)) {
        best = loss;
        stale = 0;
        if (snapshot && epoch < o.epochs - 1) snapshot.save(this);
        else if (snapshot) snapshot.clear();
      } else if (++stale >= patience) break;
    }
    // The weights of the best held-out epoch, not those of the last epoch tried.
    snapshot?.restore(this);
    return heldOut;
  }

  toJSON(): Record<string, unknown> {
    return {
      inputDim: this.inputDim,
      hidden: this.hidden,
      classes: this.classes,
      w1: encodeFloats(this.w1),
      b1: encodeFloats(this.b1),
      w2: encodeFloats(this.w2),
      b2: encodeFloats(this.b2),
      // Only when calibrated: models without it keep their bytes (and fingerprints).
      ...(this.temperatureValue !== 1 ? { temperature: this.temperatureValue } : {}),
    };
  }

  static fromJSON(state: unknown, what: string): SoftmaxModel {
    const s = stateRecord(state, what);
    const inputDim = stateNumber(s['inputDim'], `${what}.inputDim`);
    const hidden = stateNumber(s['hidden'], `${what}.hidden`);
    const classes = stateNumber(s['classes'], `${what}.classes`);
    const width = hidden > 0 ? hidden : classes;
    return new SoftmaxModel(
      inputDim,
      hidden,
      classes,
      decodeFloats(s['w1'], inputDim * width, `${what}.w1`),
      decodeFloats(s['b1'], width, `${what}.b1`),
      decodeFloats(s['w2'], hidden > 0 ? hidden * classes : 0, `${what}.w2`),
      decodeFloats(s['b2'], hidden > 0 ? classes : 0, `${what}.b2`),
      s['temperature'] === undefined ? 1 : positive(s['temperature'], `${what}.temperature`),
    );
  }
}

function positive(value: unknown, what: string): number {
  const n = stateNumber(value, what);
  if (n <= 0) throw new DialogueError('NLU.INVALID_MODEL', `${what}: expected a positive number`);
  return n;
}

/** A copy of a model's weights, kept to restore the best epoch after early stopping. */
class WeightSnapshot {
  private saved: Float32Array[] | null = null;

  private static parts(model: SoftmaxModel): Float32Array[] {
    return [model.w1, model.b1, model.w2, model.b2];
  }

  save(model: SoftmaxModel): void {
    const parts = WeightSnapshot.parts(model);
    if (!this.saved) this.saved = parts.map((p) => new Float32Array(p.length));
    parts.forEach((p, i) => this.saved![i]!.set(p));
  }

  /** The current weights are the best: nothing to restore. */
  clear(): void {
    this.saved = null;
  }

  restore(model: SoftmaxModel): void {
    if (!this.saved) return;
    const saved = this.saved;
    WeightSnapshot.parts(model).forEach((p, i) => p.set(saved[i]!));
  }
}

export function softmaxInPlace(a: Float64Array, temperature = 1): void {
  let max = -Infinity;
  for (let i = 0; i < a.length; i++) if ((a[i] ?? 0) > max) max = a[i] ?? 0;
  let sum = 0;
  const scale = 1 / temperature;
  for (let i = 0; i < a.length; i++) {
    const e = Math.exp(((a[i] ?? 0) - max) * scale);
    a[i] = e;
    sum += e;
  }
  for (let i = 0; i < a.length; i++) a[i] = (a[i] ?? 0) / sum;
}
