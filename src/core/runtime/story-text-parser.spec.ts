import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { userUttered } from 'src/core/events/user-uttered';
import { trainNlu } from 'src/core/nlu/pipeline';
import { storyTextParser } from './parse-text';

/** A story of the given user texts (what story evaluation parses end to end). */
const story = (name: string, texts: string[]): TrainingTracker => ({
  name,
  isRule: false,
  file: 'tests/test_stories.yml',
  line: undefined,
  events: texts.map((text) => userUttered({ text, intent: { name: 'order' }, timestamp: 0 })),
  userTurns: texts.length,
});

describe('storyTextParser (story evaluation end to end)', () => {
  let server: Server;
  let url: string;
  const asked: string[] = [];

  beforeAll(async () => {
    // A Duckling server (POST /parse, form-encoded text): the number 3 wherever "3" is.
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const text = new URLSearchParams(body).get('text') ?? '';
        asked.push(text);
        const at = text.indexOf('3');
        const found =
          at < 0
            ? []
            : [
                {
                  body: '3',
                  start: at,
                  end: at + 1,
                  dim: 'number',
                  value: { value: 3, type: 'value' },
                },
              ];
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(found));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("answers each user text with the Duckling server's entities, asking once per distinct text", async () => {
    const nlu = await trainNlu(
      {
        examples: [
          { text: 'hello', intent: 'greet', entities: [] },
          { text: 'I want 3 pizzas', intent: 'order', entities: [] },
        ],
        synonyms: {},
        regexFeatures: [],
        lookupTables: [],
        responses: {},
      },
      {
        language: 'en',
        pipeline: [
          { name: 'WhitespaceTokenizer' },
          { name: 'KeywordIntentClassifier' },
          { name: 'DucklingEntityExtractor', url },
        ],
      },
    );
    const parse = await storyTextParser(nlu, [
      story('one', ['I want 3 pizzas', 'hello']),
      story('two', ['I want 3 pizzas', '/greet']),
    ]);
    expect(parse('I want 3 pizzas').entities).toEqual([
      expect.objectContaining({ entity: 'number', value: 3, start: 7, end: 8 }),
    ]);
    expect(parse('hello').entities).toEqual([]);
    // The `/intent` shortcut bypasses the NLU; each other text was asked once, ahead.
    expect(parse('/greet').intent).toEqual(expect.objectContaining({ name: 'greet' }));
    expect(asked.sort()).toEqual(['I want 3 pizzas', 'hello']);
  });
});
