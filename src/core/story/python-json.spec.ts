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

  it('writes every UTF-16 code unit as Python does', () => {
    // Python's ESCAPE_ASCII: `"`, `\` and the short forms, every other unit outside space..~
    // as \u followed by four lowercase hex digits.
    const SHORT: Record<string, string> = {
      '"': '\\"',
      '\\': '\\\\',
      '\n': '\\n',
      '\r': '\\r',
      '\t': '\\t',
      '\b': '\\b',
      '\f': '\\f',
    };
    for (let code = 0; code <= 0xffff; code++) {
      const ch = String.fromCharCode(code);
      const expected =
        SHORT[ch] ??
        (code >= 0x20 && code <= 0x7e ? ch : `\\u${code.toString(16).padStart(4, '0')}`);
      if (pythonJsonDumps(`a${ch}`) !== `"a${expected}"`) {
        throw new Error(`code unit ${code.toString(16)}: ${pythonJsonDumps(`a${ch}`)}`);
      }
    }
  });

  it('escapes object keys like strings', () => {
    expect(pythonJsonDumps({ 'K\u00f6ln "x"': 1 })).toBe('{"K\\u00f6ln \\"x\\"": 1}');
  });
});
