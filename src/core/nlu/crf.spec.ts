import { bilouConstraints } from 'src/core/nlu/bilou';
import { LinearChainCrf } from 'src/core/nlu/crf';
import { type SparseVector } from 'src/core/nlu/message';
import { Random } from 'src/core/nlu/random';
import { nluKernels } from 'src/core/nlu/wasm/kernels';

const TAGS = ['O', 'B-a', 'I-a', 'L-a', 'U-a', 'B-b', 'I-b', 'L-b', 'U-b'];
const FEATURES = 7;

/** A CRF with seeded random weights (large enough that paths differ clearly). */
function randomCrf(seed: number, constrained: boolean): LinearChainCrf {
  const rng = new Random(seed);
  const K = TAGS.length;
  const fill = (n: number, scale: number): Float32Array =>
    Float32Array.from({ length: n }, () => (rng.next() * 2 - 1) * scale);
  const crf = new LinearChainCrf(
    FEATURES,
    K,
    fill(FEATURES * K, 3),
    fill(K * K, 2),
    fill(K, 1),
    fill(K, 1),
  );
  crf.constraints = bilouConstraints(TAGS, constrained);
  return crf;
}

function randomFeatures(rng: Random, T: number): SparseVector[] {
  return Array.from({ length: T }, () => {
    const idx: number[] = [];
    const val: number[] = [];
    for (let f = 0; f < FEATURES; f++) {
      if (rng.next() < 0.5) {
        idx.push(f);
        val.push(0.5 + rng.next());
      }
    }
    return { idx, val };
  });
}

/** Every allowed tag sequence with its unnormalised score, by enumeration. */
function enumerate(crf: LinearChainCrf, features: SparseVector[]): Array<[number[], number]> {
  const K = crf.numTags;
  const T = features.length;
  const cons = crf.constraints;
  const emission = (t: number, k: number): number => {
    const row = features[t]!;
    let s = 0;
    row.idx.forEach((f, n) => (s += crf.emission[f * K + k]! * row.val[n]!));
    return s;
  };
  const out: Array<[number[], number]> = [];
  const walk = (prefix: number[], score: number): void => {
    const t = prefix.length;
    if (t === T) {
      const last = prefix[T - 1]!;
      if (cons && !cons.end[last]) return;
      out.push([prefix, score + crf.endScore[last]!]);
      return;
    }
    for (let k = 0; k < K; k++) {
      let s = score + emission(t, k);
      if (t === 0) {
        if (cons && !cons.start[k]) continue;
        s += crf.startScore[k]!;
      } else {
        const j = prefix[t - 1]!;
        if (cons && !cons.previous[k]!.includes(j)) continue;
        s += crf.transition[j * K + k]!;
      }
      walk([...prefix, k], s);
    }
  };
  walk([], 0);
  return out;
}

describe('LinearChainCrf.decode', () => {
  it.each([
    [1, true],
    [2, true],
    [3, true],
    [4, true],
    [5, true],
    [3, false],
    [4, false],
  ])(
    'finds the best path and each chosen tag’s exact marginal (T=%i, BILOU constraints %s)',
    (T, constrained) => {
      for (let seed = 1; seed <= 12; seed++) {
        const crf = randomCrf(seed * 31 + T, constrained);
        const features = randomFeatures(new Random(seed * 7 + T), T);
        const paths = enumerate(crf, features);
        const best = paths.reduce((a, b) => (b[1] > a[1] ? b : a));
        const max = best[1];
        const z = paths.reduce((s, [, score]) => s + Math.exp(score - max), 0);

        // With the WebAssembly recursions (default) and with the plain JS loops.
        for (const kernels of [true, false]) {
          nluKernels.enabled = kernels;
          const decoded = crf.decode(features);
          nluKernels.enabled = true;

          expect(decoded.tags).toEqual(best[0]);
          decoded.tags.forEach((tag, t) => {
            if (tag === 0) return; // confidences are computed for entity tags
            const marginal =
              paths
                .filter(([tags]) => tags[t] === tag)
                .reduce((s, [, score]) => s + Math.exp(score - max), 0) / z;
            expect(decoded.confidences[t]).toBeCloseTo(marginal, 10);
          });
        }
      }
    },
  );

  it.each([true, false])(
    'gives the plain JS results with the WebAssembly kernels (BILOU constraints %s)',
    (constrained) => {
      for (let seed = 1; seed <= 20; seed++) {
        const crf = randomCrf(seed * 13, constrained);
        const rng = new Random(seed);
        // Up to long sentences, and one past the kernel's capacity (JS path either way).
        for (const T of [1, 2, 6, 17, 40, seed === 1 ? 700 : 9]) {
          const features = randomFeatures(rng, T);
          const base = Float64Array.from({ length: T * crf.numTags }, () => rng.next() * 4 - 2);
          const fast = crf.decode(features, true, base);
          nluKernels.enabled = false;
          const plain = crf.decode(features, true, base);
          nluKernels.enabled = true;
          // The recursions are bit-identical; exp differs from Math.exp by an ulp or two.
          expect(fast.tags).toEqual(plain.tags);
          fast.confidences.forEach((c, t) => expect(c).toBeCloseTo(plain.confidences[t]!, 13));
        }
      }
    },
  );

  it('adds base emissions (tokens × tags) to the feature emissions', () => {
    const crf = randomCrf(99, true);
    const features = randomFeatures(new Random(5), 3);
    const K = crf.numTags;
    const base = new Float64Array(3 * K);
    base[1 * K + 4] = 50; // U-a at position 1 wins whatever the features say
    const decoded = crf.decode(features, true, base);
    expect(decoded.tags[1]).toBe(4);
    expect(decoded.confidences[1]).toBeGreaterThan(0.999);
  });

  it('returns nothing for an empty sequence, and confidence 1 where no entity is tagged', () => {
    const crf = randomCrf(3, true);
    expect(crf.decode([])).toEqual({ tags: [], confidences: [] });
    const K = crf.numTags;
    const base = new Float64Array(2 * K);
    base[0] = 100;
    base[K] = 100;
    expect(crf.decode(randomFeatures(new Random(1), 2), true, base)).toEqual({
      tags: [0, 0],
      confidences: [1, 1],
    });
  });
});
