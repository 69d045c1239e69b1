import { DialogueError } from 'src/core';
import { parseIsoUtc, toConversationFilter } from './conversation-filters';

describe('conversation filters', () => {
  it('reads ISO 8601 UTC times with and without milliseconds as epoch seconds', () => {
    expect(parseIsoUtc('2026-01-31T23:59:59Z', 'fromTime')).toBe(1769903999);
    expect(parseIsoUtc('2026-01-31T23:59:59.250Z', 'fromTime')).toBe(1769903999.25);
    expect(parseIsoUtc('2026-01-31T23:59:59.000Z', 'toTime')).toBe(1769903999);
  });

  it.each([
    '2026-01-31',
    '2026-01-31T23:59:59',
    '2026-01-31T23:59:59+00:00',
    '2026-01-31T23:59:59.5Z',
    '2026-01-31T23:59:59.123456Z',
    '2026-02-30T00:00:00Z',
    '2026-01-31T24:00:00Z',
    ' 2026-01-31T23:59:59Z',
    'yesterday',
  ])('refuses %j with a parameter error', (value) => {
    expect(() => parseIsoUtc(value, 'toTime')).toThrow(DialogueError);
    try {
      parseIsoUtc(value, 'toTime');
    } catch (e) {
      expect((e as DialogueError).code).toBe('REQUEST.INVALID_PARAMETER');
      expect((e as DialogueError).details).toEqual({ parameter: 'toTime' });
    }
  });

  it('defaults limit 10 and offset 0, and refuses out-of-range values instead of clamping', () => {
    expect(toConversationFilter({ assistantId: 'a' }, 100)).toEqual({
      assistantId: 'a',
      from: null,
      to: null,
      tagIds: [],
      limit: 10,
      offset: 0,
      eventOffset: 0,
      eventLimit: null,
    });
    expect(toConversationFilter({ assistantId: 'a', limit: null, offset: null }, 100).limit).toBe(
      10,
    );
    expect(toConversationFilter({ assistantId: 'a', limit: 100 }, 100).limit).toBe(100);
    expect(() => toConversationFilter({ assistantId: 'a', limit: 101 }, 100)).toThrow(
      'limit must be between 0 and 100, got 101.',
    );
    expect(() => toConversationFilter({ assistantId: 'a', limit: -1 }, 100)).toThrow(/limit/);
    expect(() => toConversationFilter({ assistantId: 'a', offset: -1 }, 100)).toThrow(/offset/);
    expect(() => toConversationFilter({ assistantId: 'a', eventOffset: -1 }, 100)).toThrow(
      /eventOffset must not be negative/,
    );
    expect(() => toConversationFilter({ assistantId: 'a', eventLimit: -1 }, 100)).toThrow(
      /eventLimit must not be negative/,
    );
    expect(
      toConversationFilter({ assistantId: 'a', eventOffset: 5, eventLimit: 0 }, 100),
    ).toMatchObject({ eventOffset: 5, eventLimit: 0 });
    const tags = Array.from({ length: 20 }, (_, i) => `t${i}`);
    expect(toConversationFilter({ assistantId: 'a', tagIds: tags }, 100).tagIds).toEqual(tags);
    expect(() =>
      toConversationFilter({ assistantId: 'a', tagIds: [...tags, 'one more'] }, 100),
    ).toThrow('tagIds holds at most 20 tags, got 21.');
    expect(() =>
      toConversationFilter(
        { assistantId: 'a', fromTime: '2026-01-02T00:00:00Z', toTime: '2026-01-01T00:00:00Z' },
        100,
      ),
    ).toThrow(/later/);
  });
});
