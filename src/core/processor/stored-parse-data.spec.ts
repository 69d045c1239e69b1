import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { serializeEvent } from 'src/core/events/event-codec';
import { trainNlu } from 'src/core/nlu/pipeline';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';

const data = readNluYaml(
  readFileSync(
    join(__dirname, '..', '..', '..', 'test', 'fixtures', 'nlu', 'small-nlu.yml'),
    'utf8',
  ),
  'small-nlu.yml',
).data;

const domain = Domain.fromObject({ intents: ['greet'] });

/** Every array of `[number, number]` pairs anywhere in a JSON value (token offsets). */
function offsetArrays(value: unknown, found: unknown[][] = []): unknown[][] {
  if (Array.isArray(value)) {
    if (
      value.length > 0 &&
      value.every((v) => Array.isArray(v) && v.length === 2 && v.every(Number.isInteger))
    ) {
      found.push(value);
    }
    for (const v of value) offsetArrays(v, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) offsetArrays(v, found);
  }
  return found;
}

describe('the stored user event', () => {
  it('keeps the parse result but no per-token arrays, however long the message', async () => {
    const nlu = await trainNlu(data, {
      language: 'en',
      pipeline: [{ name: 'WhitespaceTokenizer' }, { name: 'KeywordIntentClassifier' }],
    });
    const text = `hello ${'word '.repeat(2000)}`.trim();
    const parse = nlu.parse(text);
    // /model/parse answers the tokens (Rasa's `text_tokens`): one pair per word.
    expect(parse.text_tokens).toHaveLength(2001);

    const processor = new DialogueProcessor(domain, null, { endpoint: null, now: () => 100 });
    const tracker = new DialogueStateTracker('long', domain.slots);
    tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
    await processor.handleUserMessage(
      tracker,
      {
        text,
        parseData: parse as unknown as Record<string, never>,
        inputChannel: 'rest',
        messageId: 'm1',
      },
      null,
    );

    const stored = serializeEvent(tracker.events[tracker.events.length - 1]!);
    expect(stored.event).toBe('user');
    const parseData = stored.parse_data as Record<string, unknown>;
    expect(parseData).not.toHaveProperty('text_tokens');
    expect(offsetArrays(stored)).toEqual([]);
    expect(parseData.intent).toEqual(parse.intent);
    expect(parseData.entities).toEqual(parse.entities);
    expect(parseData.text).toBe(text);
    // The stored event is of the order of its text, not a multiple of it.
    expect(JSON.stringify(stored).length).toBeLessThan(2 * text.length + 2000);
  });
});
