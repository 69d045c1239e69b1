import { DialogueStateTracker } from 'src/core';
import { NO_RECENT_EVENTS } from './recent-events';
import { type CachedSession, estimateJsonSize, SessionCache } from './session-cache';

function session(id: string, bytes: number): CachedSession {
  return {
    tracker: new DialogueStateTracker(id, []),
    version: null,
    firstSeq: 1,
    bytes,
    recent: NO_RECENT_EVENTS,
  };
}

describe('SessionCache', () => {
  it('drops the least recently used sessions once their estimated bytes pass the bound', () => {
    const cache = new SessionCache(1000, 100);
    cache.set('a', session('a', 40));
    cache.set('b', session('b', 40));
    cache.get('a'); // a is now the most recently used
    cache.set('c', session('c', 40));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    expect(cache.bytes).toBe(80);
  });

  it('does not keep a session larger than the whole bound', () => {
    const cache = new SessionCache(1000, 100);
    cache.set('a', session('a', 40));
    cache.set('huge', session('huge', 101));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.bytes).toBe(40);
  });

  it('accounts a replaced or deleted entry once', () => {
    const cache = new SessionCache(1000, 100);
    cache.set('a', session('a', 40));
    cache.set('a', session('a', 60));
    expect(cache.bytes).toBe(60);
    cache.delete('a');
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('still bounds the number of conversations', () => {
    const cache = new SessionCache(2, 1_000_000);
    for (const id of ['a', 'b', 'c']) cache.set(id, session(id, 1));
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('estimateJsonSize', () => {
  it('is about the length of the JSON text', () => {
    const value = {
      event: 'user',
      text: 'x'.repeat(5000),
      parse_data: { intent: { name: 'greet', confidence: 0.9 }, entities: [], list: [1, 2, 3] },
    };
    const actual = JSON.stringify(value).length;
    const estimate = estimateJsonSize(value);
    expect(estimate).toBeGreaterThan(actual * 0.9);
    expect(estimate).toBeLessThan(actual * 1.2);
  });
});
