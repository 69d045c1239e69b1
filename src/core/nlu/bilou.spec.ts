import { bilouConstraints, spansFromTags, tagSet, tagsFromEntities } from 'src/core/nlu/bilou';
import { whitespaceTokenize } from 'src/core/nlu/components/whitespace-tokenizer';

describe('BILOU tagging', () => {
  const text = 'from new york city to rome';
  const tokens = whitespaceTokenize(text);
  const entities = [
    { entity: 'city', start: 5, end: 18, value: 'new york city', role: 'departure' },
    { entity: 'city', start: 22, end: 26, value: 'rome', role: 'destination' },
  ];

  it('tags tokens with B/I/L/U', () => {
    expect(tagsFromEntities(tokens, entities, 'entity', true)).toEqual([
      'O',
      'B-city',
      'I-city',
      'L-city',
      'O',
      'U-city',
    ]);
    expect(tagsFromEntities(tokens, entities, 'role', true)).toEqual([
      'O',
      'B-departure',
      'I-departure',
      'L-departure',
      'O',
      'U-destination',
    ]);
    expect(tagsFromEntities(tokens, entities, 'entity', false)).toEqual([
      'O',
      'city',
      'city',
      'city',
      'O',
      'city',
    ]);
  });

  it('merges tags back into character spans, tolerating inconsistent sequences', () => {
    const tags = ['O', 'B-city', 'I-city', 'L-city', 'O', 'U-city'];
    const spans = spansFromTags(tokens, tags, [1, 0.9, 0.8, 0.95, 1, 0.7], text, () => true);
    expect(spans.map((s) => [s.label, s.start, s.end, s.confidence])).toEqual([
      ['city', 5, 18, 0.8],
      ['city', 22, 26, 0.7],
    ]);
    const loose = spansFromTags(
      tokens,
      ['O', 'I-city', 'L-city', 'U-city', 'O', 'O'],
      [],
      text,
      () => true,
    );
    expect(loose.map((s) => [s.start, s.end])).toEqual([
      [5, 13],
      [14, 18],
    ]);
  });

  it('splits an entity at a comma when split_entities_by_comma applies', () => {
    const t = 'apples, pears';
    const toks = whitespaceTokenize(t);
    const tags = ['B-fruit', 'L-fruit'];
    expect(
      spansFromTags(toks, tags, [], t, () => true).map((s) => t.slice(s.start, s.end)),
    ).toEqual(['apples', 'pears']);
    expect(
      spansFromTags(toks, tags, [], t, () => false).map((s) => t.slice(s.start, s.end)),
    ).toEqual(['apples, pears']);
  });
});

describe('BILOU decoding constraints', () => {
  it('allows only well-formed transitions, starts and ends', () => {
    const tags = tagSet(['a', 'b'], true); // O, B-a, I-a, L-a, U-a, B-b, I-b, L-b, U-b
    const c = bilouConstraints(tags, true);
    if (!c) throw new Error('expected constraints');
    const name = (ids: Int32Array): string[] => [...ids].map((i) => tags[i] ?? '?');
    expect(name(c.previous[tags.indexOf('I-a')] ?? new Int32Array())).toEqual(['B-a', 'I-a']);
    expect(name(c.previous[tags.indexOf('B-b')] ?? new Int32Array())).toEqual([
      'O',
      'L-a',
      'U-a',
      'L-b',
      'U-b',
    ]);
    expect(name(c.next[tags.indexOf('B-a')] ?? new Int32Array())).toEqual(['I-a', 'L-a']);
    expect([...c.start].map((v, i) => (v ? tags[i] : null)).filter(Boolean)).toEqual([
      'O',
      'B-a',
      'U-a',
      'B-b',
      'U-b',
    ]);
    expect([...c.end].map((v, i) => (v ? tags[i] : null)).filter(Boolean)).toEqual([
      'O',
      'L-a',
      'U-a',
      'L-b',
      'U-b',
    ]);
    expect(bilouConstraints(tagSet(['a'], false), false)).toBeNull();
  });
});
