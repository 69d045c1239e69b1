import { type TagConstraints } from 'src/core/nlu/bilou';
import { type SparseVector } from 'src/core/nlu/message';
import { Random } from 'src/core/nlu/random';
import { axpy, decodeFloats, encodeFloats, stateNumber, stateRecord } from 'src/core/nlu/sparse';
import { CrfKernel, nluKernels } from 'src/core/nlu/wasm/kernels';

/** One training sequence: per-token sparse features and gold tag ids. */
export interface CrfSequence {
  readonly features: readonly SparseVector[];
  readonly tags: readonly number[];
}

export interface CrfTrainOptions {
  readonly epochs: number;
  /** L2 strength on the whole-data objective (crfsuite's c2). */
  readonly l2: number;
  readonly learningRate: number;
  readonly seed: number;
  readonly onEpoch?: (epoch: number) => void | Promise<void>;
}

export interface CrfDecoding {
  readonly tags: number[];
  /** Marginal probability of each chosen tag. */
  readonly confidences: number[];
}

/**
 * Linear-chain CRF over sparse token features: emission weights (feature × tag), tag
 * transitions, start/end scores. Trained by SGD on the log-likelihood (forward–backward),
 * decoded by Viterbi; confidences are forward–backward marginals.
 */
export class LinearChainCrf {
  constructor(
    readonly numFeatures: number,
    readonly numTags: number,
    readonly emission: Float32Array = new Float32Array(numFeatures * numTags),
    readonly transition: Float32Array = new Float32Array(numTags * numTags),
    readonly startScore: Float32Array = new Float32Array(numTags),
    readonly endScore: Float32Array = new Float32Array(numTags),
  ) {}

  private allowed: TagConstraints | null = null;

  /** Allowed transitions for decoding (BILOU well-formedness); null = unconstrained. */
  get constraints(): TagConstraints | null {
    return this.allowed;
  }

  set constraints(value: TagConstraints | null) {
    this.allowed = value;
    this.lists = null;
    this.packed = null;
    this.kernel = undefined;
  }

  /** The transitions decoding walks, grouped (see TransitionGroup). */
  private packed: { forward: TransitionGroup[]; backward: TransitionGroup[] } | null = null;

  private packedTransitions(): NonNullable<LinearChainCrf['packed']> {
    if (this.packed && this.frozen) return this.packed;
    const K = this.numTags;
    const lists = this.transitionLists();
    const expT = this.frozen ? this.expTransitions() : this.computeExpTransitions();
    const packed = {
      // tags with the same allowed predecessors; weights[m][n] = transition(source n → target m)
      forward: transitionGroups(
        lists.previous,
        (target, source) => source * K + target,
        this.transition,
        expT,
      ),
      // tags with the same allowed successors; weights[m][n] = transition(tag m → successor n)
      backward: transitionGroups(lists.next, (from, to) => from * K + to, this.transition, expT),
    };
    if (this.frozen) this.packed = packed;
    return packed;
  }

  private lists: TagConstraints | null = null;

  /** The transition lists decoding walks (every pair when unconstrained). */
  private transitionLists(): TagConstraints {
    if (this.lists) return this.lists;
    const K = this.numTags;
    const all = Int32Array.from({ length: K }, (_, i) => i);
    this.lists = this.allowed ?? {
      previous: Array.from({ length: K }, () => all),
      next: Array.from({ length: K }, () => all),
      start: new Uint8Array(K).fill(1),
      end: new Uint8Array(K).fill(1),
    };
    return this.lists;
  }

  /** The decoding recursions in WebAssembly (built at the first decode once trained). */
  private kernel: CrfKernel | null | undefined;

  private decodeKernel(T: number): CrfKernel | null {
    if (!this.frozen || !nluKernels.enabled) return null;
    if (this.kernel === undefined) {
      const { forward, backward } = this.packedTransitions();
      this.kernel = CrfKernel.create(this.numTags, forward, backward);
    }
    return this.kernel && T <= this.kernel.capacity ? this.kernel : null;
  }

  /** Reused decode buffers (decoding is synchronous, so one set per model suffices). */
  private scratch = new Float64Array(0);
  private backScratch = new Int32Array(0);

  /** exp(transition) is cached once training is over. */
  private expCache: Float64Array | null = null;
  private frozen = true;

  private computeExpTransitions(): Float64Array {
    const K = this.numTags;
    const out = new Float64Array(K * K);
    for (let i = 0; i < K * K; i++) out[i] = Math.exp(this.transition[i] ?? 0);
    return out;
  }

  private expBoundaryCache: { start: Float64Array; end: Float64Array } | null = null;

  /** exp of the start and end scores (cached once training is over). */
  private expBoundaries(): { start: Float64Array; end: Float64Array } {
    if (this.expBoundaryCache && this.frozen) return this.expBoundaryCache;
    const exp = (a: Float32Array): Float64Array => Float64Array.from(a, (v) => Math.exp(v));
    const out = { start: exp(this.startScore), end: exp(this.endScore) };
    if (this.frozen) this.expBoundaryCache = out;
    return out;
  }

  private expTransitions(): Float64Array {
    this.expCache ??= this.computeExpTransitions();
    return this.expCache;
  }

  /** Emission scores (one per tag) of a single sparse row. */
  rowEmission(idx: readonly number[], val: readonly number[]): Float64Array {
    const K = this.numTags;
    const w = this.emission;
    const out = new Float64Array(K);
    for (let n = 0; n < idx.length; n++) {
      const f = idx[n]!;
      if (f >= this.numFeatures) continue;
      axpy(out, 0, w, f * K, val[n]!, K);
    }
    return out;
  }

  private emissions(features: readonly SparseVector[]): Float64Array {
    const e = new Float64Array(features.length * this.numTags);
    this.emissionsInto(features, e);
    return e;
  }

  /** Emission scores into `e` (zeroed first; tokens × tags). */
  private emissionsInto(features: readonly SparseVector[], e: Float64Array): void {
    const K = this.numTags;
    const T = features.length;
    const F = this.numFeatures;
    const w = this.emission;
    e.fill(0, 0, T * K);
    for (let t = 0; t < T; t++) {
      const row = features[t];
      if (!row) continue;
      const { idx, val } = row;
      const o = t * K;
      for (let n = 0; n < idx.length; n++) {
        const f = idx[n]!;
        if (f >= F) continue;
        axpy(e, o, w, f * K, val[n]!, K);
      }
    }
  }

  /**
   * Forward/backward with per-position scaling (probability space, no log-sum-exp): node
   * marginals (T×K) and edge marginals summed over positions (K×K).
   */
  private marginals(
    e: Float64Array,
    T: number,
    withEdges = true,
  ): { node: Float64Array; edge: Float64Array } {
    const K = this.numTags;
    const expT = this.frozen ? this.expTransitions() : this.computeExpTransitions();
    const psi = new Float64Array(T * K);
    for (let t = 0; t < T; t++) {
      let max = -Infinity;
      for (let k = 0; k < K; k++) max = Math.max(max, e[t * K + k] ?? 0);
      for (let k = 0; k < K; k++) psi[t * K + k] = Math.exp((e[t * K + k] ?? 0) - max);
    }
    for (let k = 0; k < K; k++) {
      psi[k] = (psi[k] ?? 0) * Math.exp(this.startScore[k] ?? 0);
      psi[(T - 1) * K + k] = (psi[(T - 1) * K + k] ?? 0) * Math.exp(this.endScore[k] ?? 0);
    }
    const alpha = new Float64Array(T * K);
    const beta = new Float64Array(T * K);
    const normalize = (a: Float64Array, off: number): void => {
      let sum = 0;
      for (let k = 0; k < K; k++) sum += a[off + k] ?? 0;
      if (sum > 0) for (let k = 0; k < K; k++) a[off + k] = (a[off + k] ?? 0) / sum;
    };
    for (let k = 0; k < K; k++) alpha[k] = psi[k] ?? 0;
    normalize(alpha, 0);
    for (let t = 1; t < T; t++) {
      for (let k = 0; k < K; k++) {
        let acc = 0;
        for (let j = 0; j < K; j++) acc += (alpha[(t - 1) * K + j] ?? 0) * (expT[j * K + k] ?? 0);
        alpha[t * K + k] = acc * (psi[t * K + k] ?? 0);
      }
      normalize(alpha, t * K);
    }
    for (let k = 0; k < K; k++) beta[(T - 1) * K + k] = 1;
    for (let t = T - 2; t >= 0; t--) {
      for (let j = 0; j < K; j++) {
        let acc = 0;
        for (let k = 0; k < K; k++) {
          acc +=
            (expT[j * K + k] ?? 0) * (psi[(t + 1) * K + k] ?? 0) * (beta[(t + 1) * K + k] ?? 0);
        }
        beta[t * K + j] = acc;
      }
      normalize(beta, t * K);
    }
    const node = new Float64Array(T * K);
    for (let t = 0; t < T; t++) {
      for (let k = 0; k < K; k++) {
        node[t * K + k] = (alpha[t * K + k] ?? 0) * (beta[t * K + k] ?? 0);
      }
      normalize(node, t * K);
    }
    const edge = new Float64Array(withEdges ? K * K : 0);
    const local = new Float64Array(withEdges ? K * K : 0);
    for (let t = 1; withEdges && t < T; t++) {
      let sum = 0;
      for (let j = 0; j < K; j++) {
        const a = alpha[(t - 1) * K + j] ?? 0;
        for (let k = 0; k < K; k++) {
          const v = a * (expT[j * K + k] ?? 0) * (psi[t * K + k] ?? 0) * (beta[t * K + k] ?? 0);
          local[j * K + k] = v;
          sum += v;
        }
      }
      if (sum > 0) for (let i = 0; i < K * K; i++) edge[i] = (edge[i] ?? 0) + (local[i] ?? 0) / sum;
    }
    return { node, edge };
  }

  /**
   * Viterbi path plus each chosen tag's marginal probability. The marginals come from a scaled
   * forward–backward pass restricted to what the tagged positions need (forward up to the last
   * non-`O` tag, backward down to the first); an all-`O` path needs none.
   */
  decode(
    features: readonly SparseVector[],
    withConfidence = true,
    baseEmissions: Float64Array | null = null,
  ): CrfDecoding {
    const T = features.length;
    const K = this.numTags;
    if (T === 0) return { tags: [], confidences: [] };
    const size = T * K;
    const kernel = this.decodeKernel(T);
    if (!kernel && this.scratch.length < 5 * size + K) {
      this.scratch = new Float64Array(2 * (5 * size + K));
    }
    if (!kernel && this.backScratch.length < size) this.backScratch = new Int32Array(2 * size);
    const buf = this.scratch;
    const e = kernel ? kernel.e : buf.subarray(0, size);
    this.emissionsInto(features, e);
    if (baseEmissions) for (let i = 0; i < T * K; i++) e[i] = e[i]! + (baseEmissions[i] ?? 0);
    const cons = this.transitionLists();
    const { forward, backward } = this.packedTransitions();
    const score = kernel ? kernel.score : buf.subarray(size, 2 * size);
    const back = kernel ? kernel.back : this.backScratch;
    const gathered = buf.subarray(5 * size, 5 * size + K);
    for (let k = 0; k < K; k++) {
      score[k] = cons.start[k] ? this.startScore[k]! + e[k]! : -Infinity;
    }
    // Viterbi. Per group the predecessors' scores are gathered once, then every target of the
    // group scans them against its own contiguous row of transition scores.
    if (kernel) kernel.viterbi(T);
    for (let t = 1; !kernel && t < T; t++) {
      const prev = (t - 1) * K;
      const cur = t * K;
      for (const g of forward) {
        const src = g.sources;
        const S = src.length;
        for (let n = 0; n < S; n++) gathered[n] = score[prev + src[n]!]!;
        const w = g.score;
        for (let m = 0, row = 0; m < g.targets.length; m++, row += S) {
          let best = -Infinity;
          let arg = 0;
          for (let n = 0; n < S; n++) {
            const v = gathered[n]! + w[row + n]!;
            if (v > best) {
              best = v;
              arg = n;
            }
          }
          const k = g.targets[m]!;
          score[cur + k] = best + e[cur + k]!;
          back[cur + k] = src[arg]!;
        }
      }
    }
    let best = -Infinity;
    let last = 0;
    for (let k = 0; k < K; k++) {
      if (!cons.end[k]) continue;
      const s = score[(T - 1) * K + k]! + this.endScore[k]!;
      if (s > best) {
        best = s;
        last = k;
      }
    }
    const tags = new Array<number>(T).fill(0);
    tags[T - 1] = last;
    for (let t = T - 1; t > 0; t--) tags[t - 1] = back[t * K + tags[t]!]!;
    const confidences = new Array<number>(T).fill(1);
    let first = -1;
    let lastTagged = -1;
    for (let t = 0; t < T; t++) {
      if (tags[t] !== 0) {
        if (first < 0) first = t;
        lastTagged = t;
      }
    }
    // Tag 0 is `O`: an all-O path needs no confidences.
    if (!withConfidence || first < 0) return { tags, confidences };
    const psi = kernel ? kernel.psi : buf.subarray(2 * size, 3 * size);
    if (kernel) kernel.expRows(T);
    for (let t = 0; !kernel && t < T; t++) {
      const o = t * K;
      let max = -Infinity;
      for (let k = 0; k < K; k++) if (e[o + k]! > max) max = e[o + k]!;
      for (let k = 0; k < K; k++) psi[o + k] = Math.exp(e[o + k]! - max);
    }
    const { start: expStart, end: expEnd } = this.expBoundaries();
    for (let k = 0; k < K; k++) {
      psi[k] = cons.start[k] ? psi[k]! * expStart[k]! : 0;
      const o = (T - 1) * K + k;
      psi[o] = cons.end[k] ? psi[o]! * expEnd[k]! : 0;
    }
    // Scaled forward–backward (each row normalised to sum 1 as it is made).
    const alpha = kernel ? kernel.alpha : buf.subarray(3 * size, 4 * size);
    const beta = kernel ? kernel.beta : buf.subarray(4 * size, 5 * size);
    let sum = 0;
    for (let k = 0; k < K; k++) sum += alpha[k] = psi[k]!;
    scaleRow(alpha, 0, K, sum);
    if (kernel) kernel.forward(lastTagged);
    for (let t = 1; !kernel && t <= lastTagged; t++) {
      const prev = (t - 1) * K;
      const cur = t * K;
      sum = 0;
      for (const g of forward) {
        const src = g.sources;
        const S = src.length;
        for (let n = 0; n < S; n++) gathered[n] = alpha[prev + src[n]!]!;
        const w = g.exp;
        for (let m = 0, row = 0; m < g.targets.length; m++, row += S) {
          let acc = 0;
          for (let n = 0; n < S; n++) acc += gathered[n]! * w[row + n]!;
          const k = g.targets[m]!;
          const v = acc * psi[cur + k]!;
          alpha[cur + k] = v;
          sum += v;
        }
      }
      scaleRow(alpha, cur, K, sum);
    }
    for (let k = 0; k < K; k++) beta[(T - 1) * K + k] = 1;
    if (kernel) kernel.backward(T, first);
    for (let t = T - 2; !kernel && t >= first; t--) {
      const nextRow = (t + 1) * K;
      const cur = t * K;
      sum = 0;
      for (const g of backward) {
        const dst = g.sources;
        const S = dst.length;
        for (let n = 0; n < S; n++) {
          const k = dst[n]!;
          gathered[n] = psi[nextRow + k]! * beta[nextRow + k]!;
        }
        const w = g.exp;
        for (let m = 0, row = 0; m < g.targets.length; m++, row += S) {
          let acc = 0;
          for (let n = 0; n < S; n++) acc += w[row + n]! * gathered[n]!;
          beta[cur + g.targets[m]!] = acc;
          sum += acc;
        }
      }
      scaleRow(beta, cur, K, sum);
    }
    for (let t = first; t <= lastTagged; t++) {
      const o = t * K;
      let z = 0;
      for (let k = 0; k < K; k++) z += alpha[o + k]! * beta[o + k]!;
      const tag = tags[t]!;
      confidences[t] = z > 0 ? (alpha[o + tag]! * beta[o + tag]!) / z : 0;
    }
    return { tags, confidences };
  }

  /** SGD on the regularised negative log-likelihood. */
  async fit(data: readonly CrfSequence[], o: CrfTrainOptions): Promise<void> {
    const K = this.numTags;
    this.frozen = false;
    this.expCache = null;
    this.packed = null;
    this.kernel = undefined;
    this.expBoundaryCache = null;
    const rng = new Random(o.seed);
    const order = data.map((_, i) => i);
    const n = Math.max(1, data.length);
    const lambda = o.l2 / n;
    let t = 0;
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      rng.shuffle(order);
      for (const i of order) {
        const seq = data[i];
        if (!seq || seq.features.length === 0) continue;
        const T = seq.features.length;
        const lr = o.learningRate / (1 + t / (5 * n));
        t += 1;
        const e = this.emissions(seq.features);
        const { node, edge } = this.marginals(e, T);
        // emission gradient: observed − expected, per active feature
        for (let s = 0; s < T; s++) {
          const row = seq.features[s];
          const gold = seq.tags[s] ?? 0;
          if (!row) continue;
          for (let m = 0; m < row.idx.length; m++) {
            const f = row.idx[m] ?? 0;
            if (f >= this.numFeatures) continue;
            const v = row.val[m] ?? 0;
            const base = f * K;
            for (let k = 0; k < K; k++) {
              const g = ((k === gold ? 1 : 0) - (node[s * K + k] ?? 0)) * v;
              const w = this.emission[base + k] ?? 0;
              this.emission[base + k] = w + lr * (g - lambda * w);
            }
          }
        }
        for (let j = 0; j < K; j++) {
          for (let k = 0; k < K; k++) {
            const w = this.transition[j * K + k] ?? 0;
            this.transition[j * K + k] = w + lr * (-(edge[j * K + k] ?? 0) - lambda * w);
          }
        }
        for (let s = 1; s < T; s++) {
          const a = seq.tags[s - 1] ?? 0;
          const b = seq.tags[s] ?? 0;
          this.transition[a * K + b] = (this.transition[a * K + b] ?? 0) + lr;
        }
        for (let k = 0; k < K; k++) {
          this.startScore[k] =
            (this.startScore[k] ?? 0) + lr * ((k === seq.tags[0] ? 1 : 0) - (node[k] ?? 0));
          this.endScore[k] =
            (this.endScore[k] ?? 0) +
            lr * ((k === seq.tags[T - 1] ? 1 : 0) - (node[(T - 1) * K + k] ?? 0));
        }
      }
      if (o.onEpoch) await o.onEpoch(epoch);
    }
    this.frozen = true;
    this.expCache = null;
    this.packed = null;
    this.kernel = undefined;
    this.expBoundaryCache = null;
  }

  toJSON(): Record<string, unknown> {
    return {
      numFeatures: this.numFeatures,
      numTags: this.numTags,
      emission: encodeFloats(this.emission),
      transition: encodeFloats(this.transition),
      start: encodeFloats(this.startScore),
      end: encodeFloats(this.endScore),
    };
  }

  static fromJSON(state: unknown, what: string): LinearChainCrf {
    const s = stateRecord(state, what);
    const F = stateNumber(s['numFeatures'], `${what}.numFeatures`);
    const K = stateNumber(s['numTags'], `${what}.numTags`);
    return new LinearChainCrf(
      F,
      K,
      decodeFloats(s['emission'], F * K, `${what}.emission`),
      decodeFloats(s['transition'], K * K, `${what}.transition`),
      decodeFloats(s['start'], K, `${what}.start`),
      decodeFloats(s['end'], K, `${what}.end`),
    );
  }
}

/**
 * Tags that share one list of allowed neighbours (with BILOU: `O`/`B-*`/`U-*` share their
 * predecessors, `I-x`/`L-x` theirs), with each member's transition weights to those neighbours
 * as one contiguous row: decoding gathers the neighbours' values once per group and position.
 */
interface TransitionGroup {
  /** The shared neighbour list. */
  readonly sources: Int32Array;
  /** The tags having exactly that list. */
  readonly targets: Int32Array;
  /** targets × sources transition scores, and their exp. */
  readonly score: Float64Array;
  readonly exp: Float64Array;
}

function transitionGroups(
  neighbours: readonly Int32Array[],
  index: (tag: number, neighbour: number) => number,
  transition: Float32Array,
  expT: Float64Array,
): TransitionGroup[] {
  const byList = new Map<string, number[]>();
  neighbours.forEach((list, tag) => {
    const key = list.join(',');
    const members = byList.get(key) ?? [];
    members.push(tag);
    byList.set(key, members);
  });
  return [...byList.values()].map((members) => {
    const sources = neighbours[members[0]!]!;
    const S = sources.length;
    const score = new Float64Array(members.length * S);
    const exp = new Float64Array(members.length * S);
    members.forEach((tag, m) => {
      for (let n = 0; n < S; n++) {
        const i = index(tag, sources[n]!);
        score[m * S + n] = transition[i]!;
        exp[m * S + n] = expT[i]!;
      }
    });
    return { sources, targets: Int32Array.from(members), score, exp };
  });
}

/** Divides a row of K values by their sum (left alone when the sum is 0). */
function scaleRow(a: Float64Array, offset: number, K: number, sum: number): void {
  if (!(sum > 0)) return;
  const inv = 1 / sum;
  for (let k = 0; k < K; k++) a[offset + k] = a[offset + k]! * inv;
}
