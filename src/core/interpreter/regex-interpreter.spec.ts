import { parseWithRegex } from './regex-interpreter';

describe('parseWithRegex', () => {
  it("reads an intent with a confidence and entities, in Rasa's order", () => {
    const r = parseWithRegex('/greet@0.8{"name": "Sara"}');
    expect(r.intent).toEqual({ name: 'greet', confidence: 0.8 });
    expect(r.entities).toEqual([{ entity: 'name', value: 'Sara', start: 10, end: 26 }]);
  });

  it('defaults the confidence to 1 and splits list values into entities', () => {
    const r = parseWithRegex('/order{"item": ["tea", "cake"]}');
    expect(r.intent).toEqual({ name: 'order', confidence: 1 });
    expect(r.entities.map((e) => e.value)).toEqual(['tea', 'cake']);
  });

  it('gives an empty intent for plain text', () => {
    expect(parseWithRegex('hello there')).toEqual({
      text: 'hello there',
      intent: {},
      intent_ranking: [],
      entities: [],
    });
  });

  it('keeps the intent when the entity JSON is broken', () => {
    const r = parseWithRegex('/inform{"city": }');
    expect(r.intent.name).toBe('inform');
    expect(r.entities).toEqual([]);
  });
});
