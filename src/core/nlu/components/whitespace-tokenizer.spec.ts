import { whitespaceTokenize } from 'src/core/nlu/components/whitespace-tokenizer';
import { compilePythonRegex } from 'src/core/nlu/python-regex';

const spans = (text: string, pattern: RegExp | null = null): Array<[string, number, number]> =>
  whitespaceTokenize(text, pattern).map((t) => [t.text, t.start, t.end]);

describe('whitespaceTokenize (Rasa WhitespaceTokenizer rules)', () => {
  it('drops trailing and separating punctuation and keeps offsets into the raw text', () => {
    expect(spans('Hi, how are you?')).toEqual([
      ['Hi', 0, 2],
      ['how', 4, 7],
      ['are', 8, 11],
      ['you', 12, 15],
    ]);
    expect(spans('hello!')).toEqual([['hello', 0, 5]]);
  });

  it('splits inner apostrophes between letters but keeps numbers, e-mails, URLs and hyphens', () => {
    expect(spans("what's up")).toEqual([
      ['what', 0, 4],
      ['s', 5, 6],
      ['up', 7, 9],
    ]);
    expect(spans("10'000.00 dollars")[0]).toEqual(["10'000.00", 0, 9]);
    expect(spans('mail a@b.com now')[1]).toEqual(['a@b.com', 5, 12]);
    expect(spans('check https://rasa.com/docs now')).toEqual([
      ['check', 0, 5],
      ['https://rasa.com/docs', 6, 27],
      ['now', 28, 31],
    ]);
    expect(spans('co-operate at -5 degrees').map((t) => t[0])).toEqual([
      'co-operate',
      'at',
      '-5',
      'degrees',
    ]);
  });

  it('removes emoji tokens and falls back to the whole text when nothing is left', () => {
    expect(spans('I love it 😀').map((t) => t[0])).toEqual(['I', 'love', 'it']);
    expect(spans('😀😀')).toEqual([['😀😀', 0, 4]]);
    // offsets after an astral character are UTF-16 indices
    expect(spans('😀 ok')).toEqual([['ok', 3, 5]]);
  });

  it('re-splits tokens with token_pattern', () => {
    expect(spans('hello_world foo', compilePythonRegex('(?u)[a-z]+', true))).toEqual([
      ['hello', 0, 5],
      ['world', 6, 11],
      ['foo', 12, 15],
    ]);
  });
});

describe('whitespaceTokenize on long runs of punctuation', () => {
  it('treats a run longer than 64 non-word characters as a separator and keeps the offsets', () => {
    const text = `a${'.'.repeat(10_000)}0 end`;
    expect(whitespaceTokenize(text)).toEqual([
      { text: 'a', start: 0, end: 1 },
      { text: '0', start: 10_001, end: 10_002 },
      { text: 'end', start: 10_003, end: 10_006 },
    ]);
  });

  it('tokenizes text with shorter runs as before', () => {
    expect(whitespaceTokenize(`a${'.'.repeat(64)}b`).map((t) => t.text)).toEqual([
      `a${'.'.repeat(64)}b`,
    ]);
  });
});
