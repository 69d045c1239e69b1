import { charWbNgrams } from 'src/core/nlu/components/count-vectors-featurizer';
import { windowPositions } from 'src/core/nlu/components/lexical-syntactic-featurizer';
import { compileLookupPattern, lookupTablePattern, matchSpans } from 'src/core/nlu/python-regex';
import { pyIsDigit, pyIsLower, pyIsTitle, pyIsUpper } from 'src/core/nlu/python-string';

describe('CountVectorsFeaturizer char_wb n-grams (sklearn _char_wb_ngrams)', () => {
  it('pads words with spaces and slides each n', () => {
    expect(charWbNgrams('hi', 1, 4)).toEqual([
      ' ',
      'h',
      'i',
      ' ',
      ' h',
      'hi',
      'i ',
      ' hi',
      'hi ',
      ' hi ',
    ]);
  });
  it('stops growing n once the padded word is shorter than n', () => {
    expect(charWbNgrams('a', 1, 4)).toEqual([' ', 'a', ' ', ' a', 'a ', ' a ']);
  });
  it('treats each whitespace-separated word separately', () => {
    expect(charWbNgrams('a  b', 2, 2)).toEqual([' a', 'a ', ' b', 'b ']);
  });
});

describe('Python string predicates', () => {
  it('matches str.islower/isupper/istitle/isdigit', () => {
    expect([pyIsLower('abc1'), pyIsLower('123'), pyIsLower('aB')]).toEqual([true, false, false]);
    expect([pyIsUpper('ABC1'), pyIsUpper('123')]).toEqual([true, false]);
    expect([
      pyIsTitle('Hello'),
      pyIsTitle('Hello World'),
      pyIsTitle('HELLO'),
      pyIsTitle('hello'),
    ]).toEqual([true, true, false, false]);
    expect([pyIsDigit('42'), pyIsDigit('1.5'), pyIsDigit('-1'), pyIsDigit('')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});

describe('helpers', () => {
  it('window positions follow range(-n//2, n//2 + n%2)', () => {
    expect(windowPositions(3)).toEqual([-1, 0, 1]);
    expect(windowPositions(1)).toEqual([0]);
    expect(windowPositions(2)).toEqual([-1, 0]);
  });
  it('lookup tables match whole words only (Python \\b semantics)', () => {
    const re = compileLookupPattern(lookupTablePattern(['new york', 'rome', 'c++'], true), false);
    // `\bc\+\+\b` needs a word character after the last '+', as in Python
    expect(matchSpans(re, 'from New York to romeo via rome and c++ now')).toEqual([
      [5, 13],
      [27, 31],
    ]);
    expect(matchSpans(re, 'use c++x')).toEqual([[4, 7]]);
  });
});
