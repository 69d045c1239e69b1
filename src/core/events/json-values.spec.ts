import { extendable } from 'src/core/events/json-values';

describe('extendable', () => {
  it('copies keys, values and their order as a spread does, without touching the original', () => {
    const original = { b: 1, a: [1, 2], c: { d: null }, e: 'x' };
    const copy = extendable(original);
    expect(copy).not.toBe(original);
    expect(Object.entries(copy)).toEqual(Object.entries({ ...original }));
    copy.z = true;
    copy.b = 2;
    expect(Object.keys(copy)).toEqual(['b', 'a', 'c', 'e', 'z']);
    expect(original).toEqual({ b: 1, a: [1, 2], c: { d: null }, e: 'x' });
    expect(copy.a).toBe(original.a); // shallow
  });

  it('keeps a "__proto__" key of parsed JSON as a key, not as the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as Record<
      string,
      unknown
    >;
    const copy = extendable(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'k']);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"k":1}');
  });
});
