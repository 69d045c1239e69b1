import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventIdOf, toBrokerMessage } from './wire';

const GOLDEN = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'broker');

interface Golden {
  stored: { conversationId: string; generation: string; seq: number; data: unknown };
  message: unknown;
}

describe('broker wire shape (golden files)', () => {
  const files = readdirSync(GOLDEN).filter((f) => f.endsWith('.json'));

  it('covers user, bot, action and slot events', () => {
    expect(files.sort()).toEqual(['action.json', 'bot.json', 'slot.json', 'user.json']);
  });

  it.each(files)('%s: the published body is the golden message, byte for byte', (file) => {
    const golden = JSON.parse(readFileSync(join(GOLDEN, file), 'utf8')) as Golden;
    const message = toBrokerMessage({
      conversationId: golden.stored.conversationId,
      generation: golden.stored.generation,
      seq: golden.stored.seq,
      data: JSON.stringify(golden.stored.data),
    });
    // Same keys in the same order (sender_id first, as Rasa's `{"sender_id": …, **event}`).
    expect(message.body).toBe(JSON.stringify(golden.message));
    expect(message.seq).toBe(golden.stored.seq);
    expect(message.eventId).toBe(
      (golden.message as { metadata: { event_id: string } }).metadata.event_id,
    );
  });
});

describe('eventIdOf', () => {
  it('is a UUID, the same for the same stored event and different for another', () => {
    const id = eventIdOf('c1', 'g1', 1);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdOf('c1', 'g1', 1)).toBe(id);
    expect(eventIdOf('c1', 'g1', 2)).not.toBe(id);
    expect(eventIdOf('c1', 'g2', 1)).not.toBe(id);
    expect(eventIdOf('c2', 'g1', 1)).not.toBe(id);
  });

  it('adds metadata when the stored event has none', () => {
    const m = toBrokerMessage({
      conversationId: 'c',
      generation: 'g',
      seq: 7,
      data: '{"event":"restart","timestamp":1.5}',
    });
    expect(JSON.parse(m.body)).toEqual({
      sender_id: 'c',
      event: 'restart',
      timestamp: 1.5,
      metadata: { event_id: eventIdOf('c', 'g', 7), seq: 7 },
    });
  });
});

describe('toBrokerMessage on any stored event', () => {
  /** The flat shape by its definition: parse, `sender_id` first, ids added inside metadata. */
  function expected(data: string, senderId: string, generation: string, seq: number): string {
    const parsed = JSON.parse(data) as Record<string, unknown>;
    const m = parsed.metadata;
    const metadata = typeof m === 'object' && m !== null && !Array.isArray(m) ? m : {};
    return JSON.stringify({
      sender_id: senderId,
      ...parsed,
      metadata: { ...metadata, event_id: eventIdOf(senderId, generation, seq), seq },
    });
  }

  const events: unknown[] = [
    {},
    { event: 'restart' },
    { metadata: {} },
    { metadata: {}, event: 'x' },
    { event: 'user', metadata: { model_id: 'm', assistant_id: 'a' }, text: 'hi' },
    { event: 'bot', text: 'a "quoted" } ] { [ , : text \\ with \\" escapes', metadata: { a: 1 } },
    { event: 'bot', metadata: { nested: { deep: ['}', '{', { x: '"' }] }, n: -1.5e-7 } },
    { event: 'slot', name: 's', value: null, metadata: { t: true, f: false, z: 0 } },
    { metadata: null, event: 'a' },
    { metadata: [1, 2], event: 'a' },
    { metadata: 'text', event: 'a' },
    { metadata: 3 },
    { event: 'a', metadata: { event_id: 'theirs', seq: 99 } },
    { event: 'a', metadata: { seq: 1 } },
    { event: 'a', metadata: { note: 'mentions "seq" and "event_id"' } },
    { sender_id: 'someone else', event: 'a', metadata: { x: 1 } },
    { 7: 'index key', event: 'a', metadata: {} },
    { event: 'a', metadata: { 3: 'index key inside', b: 2 } },
    { 'k\u0000"\\ey': 'escaped key', metadata: { y: 'é ✓ \u2028 \ud83d\ude00' } },
    { event: 'a', list: [[], {}, [[{}]], ''], metadata: { e: '' }, after: { metadata: 1 } },
    { event: 'stack', update: '[{"op": "add", "path": "/0", "value": {"a": "}"}}]', metadata: {} },
  ];

  it.each(events.map((e, i) => [i, JSON.stringify(e)]))(
    'event %i: the body is the parsed definition, byte for byte',
    (_i, data) => {
      const sender = 'conv "1" ✓';
      const message = toBrokerMessage({ conversationId: sender, generation: 'g', seq: 42, data });
      expect(message.body).toBe(expected(data, sender, 'g', 42));
      expect(message.eventId).toBe(eventIdOf(sender, 'g', 42));
    },
  );

  it.each([
    '{"event": "bot", "metadata": {"a": 1}}',
    '{"event":"bot","metadata":{"a":1} }',
    '{"event":"bot","n":1 ,"metadata":{}}',
    '{\n"event":"bot"}',
    '{"event":"bot","metadata":{"a":[1,\t2]}}',
  ])('writes JSON from another writer (%s) without its white space', (data) => {
    const message = toBrokerMessage({ conversationId: 'c', generation: 'g', seq: 3, data });
    expect(message.body).toBe(expected(data, 'c', 'g', 3));
  });

  it('keeps a lone surrogate as JSON.stringify escapes it', () => {
    const data = JSON.stringify({ event: 'bot', text: 'x\ud800y', metadata: { k: 'v' } });
    const message = toBrokerMessage({ conversationId: 'c', generation: 'g', seq: 1, data });
    expect(message.body).toBe(expected(data, 'c', 'g', 1));
  });
});

describe('toBrokerMessage on generated events', () => {
  it('matches the parsed definition for 2,000 seeded random events', () => {
    let state = 12345;
    const rand = (k: number): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % k;
    };
    const strings = [
      '',
      'a',
      'seq',
      'event_id',
      'metadata',
      'sender_id',
      '"}',
      '\\',
      '{[',
      '0',
      '✓',
    ];
    const value = (depth: number): unknown => {
      switch (rand(depth > 2 ? 4 : 6)) {
        case 0:
          return strings[rand(strings.length)];
        case 1:
          return rand(3) === 0 ? null : rand(2) === 0;
        case 2:
          return (rand(2000) - 1000) / 7;
        case 3:
          return rand(1000);
        case 4:
          return Array.from({ length: rand(3) }, () => value(depth + 1));
        default:
          return object(depth + 1);
      }
    };
    const object = (depth: number): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      for (let k = rand(4); k > 0; k--) o[strings[rand(strings.length)] as string] = value(depth);
      return o;
    };
    for (let i = 0; i < 2000; i++) {
      const event = object(0);
      if (rand(2) === 0) event.metadata = rand(4) === 0 ? value(1) : object(1);
      const data = JSON.stringify(event);
      const message = toBrokerMessage({ conversationId: 'c', generation: 'g', seq: i, data });
      const parsed = JSON.parse(data) as Record<string, unknown>;
      const m = parsed.metadata;
      const metadata = typeof m === 'object' && m !== null && !Array.isArray(m) ? m : {};
      const definition = JSON.stringify({
        sender_id: 'c',
        ...parsed,
        metadata: { ...metadata, event_id: eventIdOf('c', 'g', i), seq: i },
      });
      expect(message.body).toBe(definition);
    }
  });
});
