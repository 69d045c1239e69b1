import {
  evaluatePredicate,
  MAX_MATCH_SUBJECT_LENGTH,
  MAX_PREDICATE_DEPTH,
  MAX_PREDICATE_LENGTH,
  parsePredicate,
  predicateIdentifiers,
  PredicateSyntaxError,
} from 'src/core/flows/predicate';

const doc = (slots: Record<string, unknown> = {}, context: Record<string, unknown> = {}) => ({
  slots,
  context,
});
const holds = (predicate: string, slots: Record<string, unknown> = {}, context = {}) =>
  evaluatePredicate(predicate, doc(slots, context));

describe('parsePredicate', () => {
  it('reads and/or as one right-associative level (the pypred quirk)', () => {
    const ast = parsePredicate('slots.a and slots.b or slots.c');
    expect(ast).toMatchObject({
      kind: 'logical',
      op: 'and',
      left: { kind: 'literal', text: 'slots.a' },
      right: { kind: 'logical', op: 'or' },
    });
    const ast2 = parsePredicate('slots.a or slots.b and slots.c');
    expect(ast2).toMatchObject({ op: 'or', right: { op: 'and' } });
  });

  it('binds not tighter than and/or', () => {
    expect(parsePredicate('not slots.a and slots.b')).toMatchObject({
      kind: 'logical',
      op: 'and',
      left: { kind: 'not', operand: { kind: 'literal', text: 'slots.a' } },
    });
    expect(parsePredicate('not slots.a = 1')).toMatchObject({
      kind: 'not',
      operand: { kind: 'compare', op: '=' },
    });
  });

  it('maps == and is to =, is not to !=', () => {
    expect(parsePredicate('slots.a == 1')).toMatchObject({ kind: 'compare', op: '=' });
    expect(parsePredicate('slots.a is 1')).toMatchObject({ kind: 'compare', op: '=' });
    expect(parsePredicate('slots.a is not 1')).toMatchObject({ kind: 'compare', op: '!=' });
  });

  it('reads keywords and constants case-insensitively', () => {
    expect(parsePredicate('slots.a IS NOT NULL')).toMatchObject({
      op: '!=',
      right: { kind: 'constant', value: null },
    });
    expect(parsePredicate('True')).toEqual({ kind: 'constant', value: true });
    expect(parsePredicate('Undefined')).toEqual({ kind: 'undefined' });
    expect(parsePredicate('EMPTY')).toEqual({ kind: 'empty' });
  });

  it('reads numbers (negative, decimal), quoted strings, sets and comments', () => {
    expect(parsePredicate('-2.5')).toEqual({ kind: 'number', value: -2.5 });
    expect(parsePredicate("'a b'")).toEqual({ kind: 'literal', text: 'a b', quoted: true });
    expect(parsePredicate('{"a" b 3 true}')).toMatchObject({
      kind: 'set',
      items: [
        { kind: 'literal', text: 'a', quoted: true },
        { kind: 'literal', text: 'b', quoted: false },
        { kind: 'number', value: 3 },
        { kind: 'constant', value: true },
      ],
    });
    expect(parsePredicate('slots.a # a comment')).toMatchObject({ kind: 'literal' });
  });

  it.each([
    ['', /empty/],
    ['slots.a and', /end of condition/],
    ['slots.a = = 1', /unexpected '='/],
    ['(slots.a', /end of condition/],
    ['slots.a = 1)', /unexpected '\)'/],
    ["slots.a = 'open", /unclosed quote/],
    ['slots.a ! 1', /unexpected '!'/],
    ['slots.a = 1 = 2', /unexpected '='/],
    ['slots.a slots.b', /unexpected 'slots.b'/],
    ['slots.a contains {"x"}', /right side of 'contains'/],
    ['slots.a contains undefined', /right side of 'contains'/],
    ['slots.a matches 3', /regular expression string/],
    ['slots.a matches "(unclosed"', /does not compile/],
  ])('rejects %j', (text, message) => {
    expect(() => parsePredicate(text)).toThrow(PredicateSyntaxError);
    expect(() => parsePredicate(text)).toThrow(message);
  });

  it('bounds the input: length and nesting depth', () => {
    expect(() => parsePredicate(`slots.a = '${'x'.repeat(MAX_PREDICATE_LENGTH)}'`)).toThrow(
      /longer than/,
    );
    const deep = `${'('.repeat(MAX_PREDICATE_DEPTH + 1)}true${')'.repeat(MAX_PREDICATE_DEPTH + 1)}`;
    expect(() => parsePredicate(deep)).toThrow(/nested deeper/);
    const nots = `${'not '.repeat(MAX_PREDICATE_DEPTH + 1)}true`;
    expect(() => parsePredicate(nots)).toThrow(/nested deeper/);
    const shallow = `${'('.repeat(10)}true${')'.repeat(10)}`;
    expect(parsePredicate(shallow)).toEqual({ kind: 'constant', value: true });
  });
});

describe('evaluatePredicate', () => {
  describe('the and/or quirk', () => {
    it('a and b or c is a and (b or c)', () => {
      // Left-to-right precedence would make this true through `c`.
      expect(holds('slots.a and slots.b or slots.c', { a: false, b: false, c: true })).toBe(false);
      expect(holds('(slots.a and slots.b) or slots.c', { a: false, b: false, c: true })).toBe(true);
    });

    it('a or b and c is a or (b and c)', () => {
      expect(holds('slots.a or slots.b and slots.c', { a: true, b: false, c: false })).toBe(true);
    });

    it('not applies to its own factor only', () => {
      expect(holds('not slots.a and slots.b', { a: false, b: true })).toBe(true);
      expect(holds('not slots.a and slots.b', { a: false, b: false })).toBe(false);
      expect(holds('not not slots.a', { a: 1 })).toBe(true);
    });

    it('short-circuits: an error on the side not evaluated does not matter', () => {
      expect(holds('slots.a or slots.b > 3', { a: true, b: 'x' })).toBe(true);
      expect(holds('slots.a and slots.b > 3', { a: true, b: 'x' })).toBe(false);
    });
  });

  describe('comparisons', () => {
    it('=, ==, is and their negations compare values', () => {
      expect(holds("slots.x = 'yes'", { x: 'yes' })).toBe(true);
      expect(holds('slots.x == "yes"', { x: 'yes' })).toBe(true);
      expect(holds("slots.x is 'yes'", { x: 'yes' })).toBe(true);
      expect(holds("slots.x != 'yes'", { x: 'no' })).toBe(true);
      expect(holds("slots.x is not 'yes'", { x: 'yes' })).toBe(false);
    });

    it('numbers compare numerically; booleans are numbers, as in Python', () => {
      expect(holds('slots.n = 5', { n: 5 })).toBe(true);
      expect(holds('slots.n = 5.0', { n: 5 })).toBe(true);
      expect(holds('slots.b = 1', { b: true })).toBe(true);
      expect(holds('slots.n > 4.5', { n: 5 })).toBe(true);
      expect(holds('slots.n >= 5', { n: 5 })).toBe(true);
      expect(holds('slots.n < 5', { n: 5 })).toBe(false);
      expect(holds('slots.n <= 5', { n: 5 })).toBe(true);
      expect(holds('slots.n > -1', { n: 0 })).toBe(true);
    });

    it('strings order lexically; a string never equals a number', () => {
      expect(holds("slots.s < 'b'", { s: 'a' })).toBe(true);
      expect(holds("slots.n = '5'", { n: 5 })).toBe(false);
    });

    it('an ordering between incompatible types is an error: false, even negated', () => {
      expect(holds('slots.s > 3', { s: '5' })).toBe(false);
      expect(holds('not slots.s > 3', { s: '5' })).toBe(false);
      expect(holds('slots.s < 3', { s: null })).toBe(false);
    });

    it('true/false/null constants', () => {
      expect(holds('slots.b = true', { b: true })).toBe(true);
      expect(holds('slots.b is false', { b: false })).toBe(true);
      expect(holds('slots.x is null', { x: null })).toBe(true);
      expect(holds('slots.x is not null', { x: 'a' })).toBe(true);
      expect(holds('slots.x is not null', { x: null })).toBe(false);
    });

    it('lists and dicts compare deeply', () => {
      expect(holds('slots.l = slots.m', { l: [1, 'a'], m: [1, 'a'] })).toBe(true);
      expect(holds('slots.l = slots.m', { l: { a: [1] }, m: { a: [1] } })).toBe(true);
      expect(holds('slots.l = slots.m', { l: [1], m: [2] })).toBe(false);
    });

    it('parenthesised expressions can be compared', () => {
      expect(holds('(slots.a and slots.b) = false', { a: true, b: false })).toBe(true);
    });
  });

  describe('identifiers', () => {
    it('an unquoted word is looked up, never a string', () => {
      expect(holds('slots.x = yes', { x: 'yes' })).toBe(false);
      expect(holds("slots.x = 'yes'", { x: 'yes' })).toBe(true);
    });

    it('looks up the whole key, then the dotted path', () => {
      expect(evaluatePredicate("a.b = 'whole'", { 'a.b': 'whole', a: { b: 'path' } })).toBe(true);
      expect(evaluatePredicate("a.b = 'path'", { a: { b: 'path' } })).toBe(true);
      expect(holds("context.info.kind = 'k'", {}, { info: { kind: 'k' } })).toBe(true);
      expect(holds('slots.x = slots.y', { x: 3, y: 3 })).toBe(true);
    });

    it('a missing identifier is Undefined', () => {
      expect(holds('slots.missing = undefined')).toBe(true);
      expect(holds('slots.missing is undefined', { other: 1 })).toBe(true);
      expect(holds('slots.missing')).toBe(false);
      expect(holds('not slots.missing')).toBe(true);
    });

    it('looking a path up inside a scalar is an error (false)', () => {
      expect(holds('slots.n.x = undefined', { n: 5 })).toBe(false);
      expect(holds('slots.n.x = undefined', { n: null })).toBe(false);
      // Python: 'x' in 'xyz' holds, then 'xyz'['x'] raises.
      expect(holds('slots.s.x = undefined', { s: 'xyz' })).toBe(false);
      // Not a substring: simply not found.
      expect(holds('slots.s.q = undefined', { s: 'xyz' })).toBe(true);
    });
  });

  describe('Undefined and empty', () => {
    it('Undefined equals Undefined and empty, nothing else', () => {
      expect(holds('slots.a = slots.b')).toBe(true);
      expect(holds('slots.a = empty')).toBe(true);
      expect(holds('slots.a = null')).toBe(false);
      expect(holds("slots.a = ''")).toBe(false);
    });

    it('empty equals zero-length values but not null', () => {
      expect(holds('slots.s = empty', { s: '' })).toBe(true);
      expect(holds('slots.l = empty', { l: [] })).toBe(true);
      expect(holds('slots.d = empty', { d: {} })).toBe(true);
      expect(holds('slots.s = empty', { s: 'x' })).toBe(false);
      expect(holds('slots.n = empty', { n: null })).toBe(false);
      expect(holds('slots.n = empty', { n: 0 })).toBe(false);
    });

    it('!= follows pypred: Undefined differs from empty, empty does not differ from Undefined', () => {
      expect(holds('slots.a != undefined')).toBe(false);
      expect(holds('slots.a != empty')).toBe(true);
      expect(holds('empty != slots.a')).toBe(false);
      expect(holds('slots.s != empty', { s: '' })).toBe(false);
      expect(holds('slots.s != undefined', { s: 'x' })).toBe(true);
    });

    it('ordering with Undefined or empty is false both ways', () => {
      expect(holds('slots.a > 1')).toBe(false);
      expect(holds('slots.a < 1')).toBe(false);
      expect(holds('not slots.a < 1')).toBe(true);
      expect(holds('slots.n >= empty', { n: 1 })).toBe(false);
    });
  });

  describe('truthiness of a bare factor', () => {
    it.each([
      [true, true],
      [false, false],
      [null, false],
      [0, false],
      [2, true],
      ['', false],
      ['a', true],
      [[], false],
      [[0], true],
      [{}, false],
      [{ a: 1 }, true],
    ])('%j is %s', (value, expected) => {
      expect(holds('slots.v', { v: value })).toBe(expected);
    });

    it('constants and literals', () => {
      expect(holds('true')).toBe(true);
      expect(holds('0')).toBe(false);
      expect(holds('"x"')).toBe(true);
      expect(holds('{}')).toBe(false);
      expect(holds('{1}')).toBe(true);
    });
  });

  describe('contains', () => {
    it('substring, list membership, dict key', () => {
      expect(holds("slots.s contains 'ell'", { s: 'hello' })).toBe(true);
      expect(holds("slots.l contains 'b'", { l: ['a', 'b'] })).toBe(true);
      expect(holds('slots.l contains 2', { l: [1, 2] })).toBe(true);
      expect(holds("slots.d contains 'k'", { d: { k: 1 } })).toBe(true);
      expect(holds("slots.d contains 'v'", { d: { k: 'v' } })).toBe(false);
    });

    it('is false on a non-container or a missing value', () => {
      expect(holds('slots.n contains 1', { n: 1 })).toBe(false);
      expect(holds("slots.missing contains 'a'")).toBe(false);
      expect(holds("slots.x contains 'a'", { x: null })).toBe(false);
    });

    it('a non-string needle in a string is an error (false)', () => {
      expect(holds('slots.s contains 1', { s: '1' })).toBe(false);
    });

    it('a set literal on the left', () => {
      expect(holds('{"a" "b"} contains slots.x', { x: 'b' })).toBe(true);
      expect(holds('{"a" "b"} contains slots.x', { x: 'c' })).toBe(false);
      expect(holds('{1 2} contains slots.x', { x: 2 })).toBe(true);
      expect(holds('{1 2} contains slots.x', { x: [2] })).toBe(false);
    });

    it('a set compares only to a set or empty', () => {
      expect(holds('slots.l = {"a"}', { l: ['a'] })).toBe(false);
      expect(holds('{} = empty')).toBe(true);
      expect(holds('{"a" "b"} = {"b" "a"}')).toBe(true);
    });
  });

  describe('matches', () => {
    it('searches anywhere in a string value', () => {
      expect(holds("slots.s matches 'b+'", { s: 'abbc' })).toBe(true);
      expect(holds("slots.s matches '^b'", { s: 'abbc' })).toBe(false);
      expect(holds('slots.s matches "^[0-9]{3}$"', { s: '123' })).toBe(true);
      expect(holds('slots.s matches "^[0-9]{3}$"', { s: '123\n' })).toBe(true);
    });

    it('is false on a non-string', () => {
      expect(holds("slots.n matches '1'", { n: 1 })).toBe(false);
      expect(holds("slots.missing matches '.*'")).toBe(false);
    });

    it('takes /re/flags', () => {
      expect(holds("slots.s matches '/^yes$/i'", { s: 'YES' })).toBe(true);
      expect(holds("slots.s matches '^yes$'", { s: 'YES' })).toBe(false);
      expect(holds("slots.s matches '/^b/m'", { s: 'a\nb' })).toBe(true);
      expect(holds("slots.s matches '/a.b/s'", { s: 'a\nb' })).toBe(true);
    });

    it('understands Python regex syntax', () => {
      expect(holds("slots.s matches '(?i)^yes'", { s: 'Yes!' })).toBe(true);
      expect(holds("slots.s matches '(?P<d>[0-9])(?P=d)'", { s: 'a11' })).toBe(true);
      expect(holds("slots.s matches '\\Aab\\Z'", { s: 'ab' })).toBe(true);
      expect(holds("slots.s matches '\\Aab\\Z'", { s: 'ab\n' })).toBe(false);
    });

    it('caps the subject length', () => {
      const long = 'a'.repeat(MAX_MATCH_SUBJECT_LENGTH + 1);
      expect(holds("slots.s matches 'a'", { s: long })).toBe(false);
      expect(holds("slots.s matches 'a'", { s: long.slice(1) })).toBe(true);
    });
  });

  it('an invalid predicate is false, not an exception', () => {
    expect(evaluatePredicate('slots.a = = 1', doc())).toBe(false);
    expect(evaluatePredicate('slots.a matches "("', doc())).toBe(false);
  });

  it('evaluates the same text again from the cache with a new document', () => {
    expect(holds("slots.x = 'a'", { x: 'a' })).toBe(true);
    expect(holds("slots.x = 'a'", { x: 'b' })).toBe(false);
    expect(evaluatePredicate('slots.a = = 1', doc())).toBe(false);
  });
});

describe('predicateIdentifiers', () => {
  it('lists unquoted identifiers once, in order, without strings, numbers or regexes', () => {
    expect(
      predicateIdentifiers(
        "slots.a = 'x' and context.b > 3 or slots.a matches 'r' or {c 'd'} contains slots.e",
      ),
    ).toEqual(['slots.a', 'context.b', 'c', 'slots.e']);
    expect(predicateIdentifiers('user_name is null')).toEqual(['user_name']);
    expect(predicateIdentifiers('true and 3 = 3')).toEqual([]);
  });

  it('throws PredicateSyntaxError on an invalid predicate', () => {
    expect(() => predicateIdentifiers('slots.a and')).toThrow(PredicateSyntaxError);
  });
});
