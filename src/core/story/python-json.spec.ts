import { pythonJsonDumps } from 'src/core/story/python-json';

// Expected texts as Python 3's json.dumps writes them (default separators, ensure_ascii).
describe('pythonJsonDumps', () => {
  it.each([
    ['plain', '"plain"'],
    ['quote" back\\ slash/', '"quote\\" back\\\\ slash/"'],
    ['tab\tnl\ncr\rbs\bff\f', '"tab\\tnl\\ncr\\rbs\\bff\\f"'],
    ['\u0000\u001f\u007f', '"\\u0000\\u001f\\u007f"'],
    ['K\u00f6ln \u2028 \u20ac', '"K\\u00f6ln \\u2028 \\u20ac"'],
    ['\u{1F600}', '"\\ud83d\\ude00"'],
    ['\ud800 lone', '"\\ud800 lone"'],
  ])('writes the string %j as Python does', (value, expected) => {
    expect(pythonJsonDumps(value)).toBe(expected);
  });

  it('writes lists and objects with ", " and ": " separators, keys in order', () => {
    expect(pythonJsonDumps([1, 2.5, null, true, false, { a: 'b', c: [{}, []] }])).toBe(
      '[1, 2.5, null, true, false, {"a": "b", "c": [{}, []]}]',
    );
    expect(pythonJsonDumps({ op: 'replace', path: '/0/step_id', value: '\u00e9' })).toBe(
      '{"op": "replace", "path": "/0/step_id", "value": "\\u00e9"}',
    );
  });

  it('escapes object keys like strings', () => {
    expect(pythonJsonDumps({ 'K\u00f6ln "x"': 1 })).toBe('{"K\\u00f6ln \\"x\\"": 1}');
  });
});
