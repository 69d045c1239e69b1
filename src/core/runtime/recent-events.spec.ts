import {
  handOverOf,
  jsonArrayOf,
  MAX_RECENT_CHARS,
  NO_RECENT_EVENTS,
  withSegment,
  type RecentSegment,
} from './recent-events';

const segment = (lastSeq: number, values: readonly unknown[], generation = 'g'): RecentSegment => ({
  after: { generation, lastSeq },
  json: jsonArrayOf(values.map((v) => JSON.stringify({ event: 'slot', value: v }))),
  count: values.length,
});

const valuesOf = (json: string): unknown[] =>
  (JSON.parse(json) as Array<{ value: unknown }>).map((e) => e.value);

describe('recent events', () => {
  it('hands over the run of segments as one array from the first one on', () => {
    let recent = withSegment(NO_RECENT_EVENTS, segment(0, [1, 2]));
    recent = withSegment(recent, segment(2, [3]));
    recent = withSegment(recent, segment(3, []));
    recent = withSegment(recent, segment(3, [4, 5]));
    const handed = handOverOf(recent)!;
    expect(handed.after).toEqual({ generation: 'g', lastSeq: 0 });
    expect(valuesOf(handed.json)).toEqual([1, 2, 3, 4, 5]);
    expect(handOverOf(NO_RECENT_EVENTS)).toBeUndefined();
  });

  it('starts a new run with a segment that does not continue the last one', () => {
    let recent = withSegment(NO_RECENT_EVENTS, segment(0, [1, 2]));
    recent = withSegment(recent, segment(5, [6]));
    expect(handOverOf(recent)).toEqual({
      after: { generation: 'g', lastSeq: 5 },
      json: segment(5, [6]).json,
    });
    recent = withSegment(recent, segment(6, [7], 'other generation'));
    expect(handOverOf(recent)?.after).toEqual({ generation: 'other generation', lastSeq: 6 });
  });

  it('drops the oldest segments past the bound, and keeps none for a segment over it', () => {
    const big = 'x'.repeat(MAX_RECENT_CHARS / 3);
    let recent = NO_RECENT_EVENTS;
    for (let i = 0; i < 5; i++) recent = withSegment(recent, segment(i, [`${i}${big}`]));
    expect(recent.chars).toBeLessThanOrEqual(MAX_RECENT_CHARS);
    const handed = handOverOf(recent)!;
    expect(handed.after.lastSeq).toBe(3);
    expect(valuesOf(handed.json).map((v) => String(v)[0])).toEqual(['3', '4']);
    expect(withSegment(recent, segment(5, ['y'.repeat(MAX_RECENT_CHARS)]))).toBe(NO_RECENT_EVENTS);
  });
});
