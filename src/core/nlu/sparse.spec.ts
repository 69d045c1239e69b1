import { axpy, sumRows } from 'src/core/nlu/sparse';

describe('sparse helpers', () => {
  it('sumRows adds rows into sorted unique indices and reuses a single row', () => {
    const a = { idx: [7, 2], val: [1, 2] };
    const b = { idx: [2, 40, 0], val: [3, 1, 0.5] };
    expect(sumRows([a, b])).toEqual({ idx: [0, 2, 7, 40], val: [0.5, 5, 1, 1] });
    expect(sumRows([a])).toBe(a);
    expect(sumRows([])).toEqual({ idx: [], val: [] });
    // scratch state is reset between calls
    expect(sumRows([b, b])).toEqual({ idx: [0, 2, 40], val: [1, 6, 2] });
    expect(
      sumRows([
        { idx: [5000], val: [2] },
        { idx: [5000], val: [1] },
      ]),
    ).toEqual({
      idx: [5000],
      val: [3],
    });
  });

  it('axpy matches the plain loop for every remainder', () => {
    for (const n of [0, 1, 3, 4, 7, 29]) {
      const w = Float32Array.from({ length: n + 5 }, (_, i) => i * 0.5 - 2);
      const out = Float64Array.from({ length: n + 2 }, (_, i) => i);
      const expected = Float64Array.from(out);
      for (let j = 0; j < n; j++) expected[1 + j] = (expected[1 + j] ?? 0) + 1.5 * (w[3 + j] ?? 0);
      axpy(out, 1, w, 3, 1.5, n);
      expect(out).toEqual(expected);
    }
  });
});
