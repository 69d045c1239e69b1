import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { readConfigYaml } from 'src/core/training-data/config-reader';
import { parseAnnotatedText } from 'src/core/training-data/entity-annotation-parser';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';

function errorOf(fn: () => unknown): DialogueError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DialogueError) return error;
    throw error;
  }
  throw new Error('expected a DialogueError');
}

describe('parseAnnotatedText (Rasa entities_parser)', () => {
  it('strips annotations and computes offsets in the plain text', () => {
    const r = parseAnnotatedText('fly from [Berlin](city) to [NYC](city:New York) now');
    expect(r.text).toBe('fly from Berlin to NYC now');
    expect(r.entities).toEqual([
      { entity: 'city', start: 9, end: 15, value: 'Berlin' },
      { entity: 'city', start: 19, end: 22, value: 'New York' },
    ]);
  });

  it('reads the JSON dict form with role, group and value', () => {
    const r = parseAnnotatedText(
      '[two]{"entity": "number", "role": "count", "group": "1", "value": "2"} pizzas',
    );
    expect(r).toEqual({
      text: 'two pizzas',
      entities: [{ entity: 'number', start: 0, end: 3, value: '2', role: 'count', group: '1' }],
    });
  });

  it('rejects broken annotations', () => {
    expect(() => parseAnnotatedText('[x]{"entity": }')).toThrow(/not valid JSON/);
    expect(() => parseAnnotatedText('[x]{"role": "a"}')).toThrow(/lacks the 'entity' key/);
    expect(() => parseAnnotatedText('[x]{"entity": "a", "colour": "b"}')).toThrow(
      /unknown key 'colour'/,
    );
    expect(() => parseAnnotatedText('go to [paris](city')).toThrow(/malformed entity annotation/);
  });
});

describe('readNluYaml', () => {
  it('reads intents, entities, synonyms, regexes, lookups and responses', () => {
    const file = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'nlu', 'small-nlu.yml');
    const { data, warnings } = readNluYaml(readFileSync(file, 'utf8'), 'small-nlu.yml');
    expect(warnings).toEqual([]);
    expect(data.examples).toHaveLength(17);
    expect(data.examples[5]).toEqual({
      text: 'fly from berlin to rome',
      intent: 'book_flight',
      entities: [
        { entity: 'city', start: 9, end: 15, value: 'berlin', role: 'departure' },
        { entity: 'city', start: 19, end: 23, value: 'rome', role: 'destination' },
      ],
    });
    expect(data.synonyms).toEqual({ NYC: 'new york', 'big apple': 'new york' });
    expect(data.regexFeatures).toEqual([{ name: 'zipcode', pattern: '\\b[0-9]{5}\\b' }]);
    expect(data.lookupTables).toEqual([{ name: 'city', elements: ['berlin', 'rome', 'paris'] }]);
    expect(data.responses['utter_faq/ask_name']).toEqual([{ text: 'I am Parley.' }]);
  });

  it('reads list-form examples with metadata', () => {
    const yaml =
      'nlu:\n- intent: greet\n  metadata: {a: 1}\n  examples:\n  - text: hi\n    metadata: {b: 2}\n';
    expect(readNluYaml(yaml, 'x.yml').data.examples).toEqual([
      { text: 'hi', intent: 'greet', entities: [], metadata: { a: 1, b: 2 } },
    ]);
  });

  it('names file and line of a bad annotation', () => {
    const yaml = 'nlu:\n- intent: greet\n  examples: |\n    - hi\n    - go to [x]{"entity": }\n';
    const e = errorOf(() => readNluYaml(yaml, 'data/nlu.yml'));
    expect(e.code).toBe('TRAINING_DATA.INVALID');
    expect(e.message).toMatch(/^data\/nlu\.yml:5: entity annotation .* is not valid JSON/);
  });

  it('names file and line of YAML syntax errors, duplicate and unknown keys', () => {
    expect(
      errorOf(() => readNluYaml('nlu:\n- intent: a\n  examples: [\n', 'n.yml')).message,
    ).toMatch(/^n\.yml:\d+: invalid YAML/);
    expect(errorOf(() => readNluYaml('nlu: []\nnlu: []\n', 'n.yml')).message).toMatch(
      /^n\.yml:2: invalid YAML/,
    );
    expect(
      errorOf(() => readNluYaml('nlu:\n- intent: a\n  exampels: |\n    - x\n', 'n.yml')).message,
    ).toBe("n.yml:3: unknown key 'exampels' in intent block (allowed: intent, examples, metadata)");
    expect(
      errorOf(() => readNluYaml('nlu:\n- regex: r\n  examples: |\n    - ([a-z\n', 'n.yml')).message,
    ).toMatch(/^n\.yml:4: invalid regex/);
  });

  it('caps aliases and size', () => {
    const bomb =
      'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n';
    expect(errorOf(() => readNluYaml(bomb, 'bomb.yml')).message).toMatch(
      /^bomb\.yml: invalid YAML/,
    );
    expect(errorOf(() => readNluYaml('nlu: []', 'big.yml', { maxChars: 3 })).message).toMatch(
      /larger than the limit/,
    );
  });

  it('warns about block lines without a dash', () => {
    const { warnings } = readNluYaml('nlu:\n- intent: a\n  examples: |\n    - x\n    y\n', 'n.yml');
    expect(warnings).toEqual(["n.yml:5: ignored line of examples of 'a' not starting with '-': y"]);
  });
});

describe('readConfigYaml', () => {
  it('reads recipe, language, pipeline and policies with defaults', () => {
    const c = readConfigYaml(
      'recipe: default.v1\nassistant_id: bot\nlanguage: de\npipeline:\n- name: WhitespaceTokenizer\n- name: DIETClassifier\n  epochs: 5\npolicies:\n- name: RulePolicy\n',
      'config.yml',
    );
    expect(c).toMatchObject({
      recipe: 'default.v1',
      assistantId: 'bot',
      language: 'de',
      pipeline: [{ name: 'WhitespaceTokenizer' }, { name: 'DIETClassifier', epochs: 5 }],
      policies: [{ name: 'RulePolicy' }],
      pipelineLines: [5, 6],
    });
    expect(readConfigYaml('language: en\n', 'c.yml').pipeline).toBeNull();
  });

  it('rejects unknown keys, recipes and nameless entries with file and line', () => {
    expect(errorOf(() => readConfigYaml('language: en\npipelines: []\n', 'c.yml')).message).toMatch(
      /^c\.yml:2: unknown key 'pipelines'/,
    );
    expect(errorOf(() => readConfigYaml('recipe: fancy.v9\n', 'c.yml')).code).toBe(
      'CONFIG.INVALID',
    );
    expect(errorOf(() => readConfigYaml('pipeline:\n- epochs: 3\n', 'c.yml')).message).toBe(
      "c.yml:2: a pipeline entry lacks 'name'",
    );
  });
});
