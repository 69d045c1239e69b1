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
