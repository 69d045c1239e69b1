import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { EntitySynonymMapper, FallbackClassifier } from 'src/core/nlu/components/simple-components';
import { classificationReport, evaluateIntents } from 'src/core/nlu/evaluation';
import { newMessage } from 'src/core/nlu/message';
import { DEFAULT_PIPELINE, loadNlu, trainNlu, type TrainedNlu } from 'src/core/nlu/pipeline';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';

const data = readNluYaml(
  readFileSync(
    join(__dirname, '..', '..', '..', 'test', 'fixtures', 'nlu', 'small-nlu.yml'),
    'utf8',
  ),
  'small-nlu.yml',
).data;

describe('trainNlu with the default pipeline', () => {
  let model: TrainedNlu;
  const stages = new Set<string>();
  beforeAll(async () => {
    model = await trainNlu(
      data,
      { language: 'en', pipeline: null },
      { seed: 1, onProgress: (s) => stages.add(s) },
    );
  });

  it('uses Rasa default pipeline and reports progress per component', () => {
    expect(model.componentNames).toEqual(DEFAULT_PIPELINE.map((c) => c.name));
    expect(stages.has('DIETClassifier#5')).toBe(true);
  });

  it('parses into the Rasa shape with intent, ranking, entities with roles and tokens', () => {
    const r = model.parse('book a flight from berlin to paris');
    expect(r.intent.name).toBe('book_flight');
    expect(r.intent_ranking.length).toBeGreaterThan(1);
    expect(r.intent_ranking[0]?.name).toBe('book_flight');
    expect(r.text_tokens[0]).toEqual([0, 4]);
    const cities = r.entities.filter((e) => e.extractor === 'DIETClassifier');
    expect(cities.map((e) => [e.value, e.start, e.end])).toEqual([
      ['berlin', 19, 25],
      ['paris', 29, 34],
    ]);
    expect(cities.map((e) => e.role)).toEqual(['departure', 'destination']);
    expect(cities[0]?.confidence_entity).toBeGreaterThan(0);
  });

  it('maps synonyms (keys lower-cased) and marks the processor', () => {
    const mapper = new EntitySynonymMapper({ nyc: 'new york', 'big apple': 'new york' });
    const m = newMessage('from Big Apple');
    m.entities.push({
      entity: 'city',
      start: 5,
      end: 14,
      value: 'Big Apple',
      extractor: 'DIETClassifier',
    });
    mapper.process(m);
    expect(m.entities[0]).toMatchObject({ value: 'new york', processors: ['EntitySynonymMapper'] });
    const e = model.parse('get me from NYC to rome').entities.find((x) => x.start === 12);
    expect(e).toMatchObject({ value: 'new york', processors: ['EntitySynonymMapper'] });
  });

  it('selects retrieval responses and names the full retrieval intent', () => {
    const r = model.parse('what is your name');
    expect(r.intent).toMatchObject({ name: 'faq', full_retrieval_intent_name: 'faq/ask_name' });
    const rs = r.response_selector?.['default'];
    expect(rs && !Array.isArray(rs) ? rs.response.utter_action : null).toBe('utter_faq/ask_name');
    expect(r.response_selector?.all_retrieval_intents).toEqual(['faq']);
  });

  it('round-trips through plain JSON with identical parses', () => {
    const json = JSON.parse(JSON.stringify(model.toJSON())) as unknown;
    const restored = loadNlu(json);
    for (const text of ['hello there', 'fly from rome to berlin', 'is it raining']) {
      expect(restored.parse(text)).toEqual(model.parse(text));
    }
  });

  it('evaluates in the rasa test shapes', () => {
    const ev = evaluateIntents(model, data);
    expect(ev.intent_evaluation?.accuracy).toBeGreaterThan(0.9);
    expect(Object.keys(ev.intent_evaluation?.report ?? {})).toEqual(
      expect.arrayContaining(['greet', 'book_flight', 'faq', 'macro avg', 'weighted avg']),
    );
    expect(ev.response_selection_evaluation?.predictions[0]).toHaveProperty(
      'intent_response_key_target',
    );
    expect(Object.keys(ev.entity_evaluation)).toEqual(['DIETClassifier']);
  });
});

describe('training is reproducible', () => {
  it('gives identical weights for the same seed', async () => {
    const config = {
      language: 'en',
      pipeline: [
        { name: 'WhitespaceTokenizer' },
        { name: 'CountVectorsFeaturizer' },
        { name: 'DIETClassifier', epochs: 20 },
      ],
    };
    const a = await trainNlu(data, config, { seed: 3 });
    const b = await trainNlu(data, config, { seed: 3 });
    expect(JSON.stringify(a.toJSON())).toBe(JSON.stringify(b.toJSON()));
  });

  it('gives the same model for the same examples in any file order', async () => {
    const config = {
      language: 'en',
      pipeline: [
        { name: 'WhitespaceTokenizer' },
        { name: 'LexicalSyntacticFeaturizer' },
        { name: 'CountVectorsFeaturizer' },
        { name: 'CountVectorsFeaturizer', analyzer: 'char_wb', min_ngram: 1, max_ngram: 3 },
        { name: 'DIETClassifier', epochs: 20 },
      ],
    };
    const reversed = { ...data, examples: [...data.examples].reverse() };
    // Every third example first, then the rest: intents interleaved differently.
    const interleaved = {
      ...data,
      examples: [
        ...data.examples.filter((_, i) => i % 3 === 0),
        ...data.examples.filter((_, i) => i % 3 !== 0),
      ],
    };
    const models = await Promise.all(
      [data, reversed, interleaved].map((d) => trainNlu(d, config, { seed: 5 })),
    );
    const [first, ...others] = models.map((m) => JSON.stringify(m.toJSON()));
    for (const other of others) expect(other).toBe(first);
  });
});

describe('config keys a component does not read', () => {
  it('are named in a warning; the keys it reads are not', async () => {
    const model = await trainNlu(data, {
      language: 'en',
      pipeline: [
        { name: 'WhitespaceTokenizer', intent_tokenization_flag: true },
        { name: 'CountVectorsFeaturizer', token_pattern: '(?u)\\b\\w+\\b' },
        { name: 'DIETClassifier', epochs: 5, constrain_similarities: true, run_eagerly: false },
      ],
    });
    expect(model.warnings).toEqual([
      "config.yml pipeline[0]: WhitespaceTokenizer ignores 'intent_tokenization_flag' (no effect in Parley)",
      "config.yml pipeline[2]: DIETClassifier ignores 'constrain_similarities', 'run_eagerly' (no effect in Parley)",
    ]);
  });
});

describe('other components', () => {
  it('RegexEntityExtractor, CRFEntityExtractor and KeywordIntentClassifier', async () => {
    const model = await trainNlu(data, {
      language: 'en',
      pipeline: [
        { name: 'WhitespaceTokenizer' },
        { name: 'RegexFeaturizer' },
        { name: 'KeywordIntentClassifier' },
        { name: 'CRFEntityExtractor', max_iterations: 30 },
        { name: 'RegexEntityExtractor' },
      ],
    });
    const r = model.parse('hello friend, fly to rome');
    expect(r.intent).toEqual({ name: 'greet', confidence: 1 });
    expect(r.entities.filter((e) => e.extractor === 'RegexEntityExtractor')).toEqual([
      { entity: 'city', start: 21, end: 25, value: 'rome', extractor: 'RegexEntityExtractor' },
    ]);
    expect(r.entities.some((e) => e.extractor === 'CRFEntityExtractor' && e.value === 'rome')).toBe(
      true,
    );
    expect(model.parse('nothing matches').intent).toEqual({ name: null, confidence: 0 });
  });

  it('FallbackClassifier applies threshold and ambiguity rules', () => {
    const fb = new FallbackClassifier(0.3, 0.1);
    const m = newMessage('x');
    m.intent = { name: 'a', confidence: 0.25 };
    m.intentRanking = [{ name: 'a', confidence: 0.25 }];
    fb.process(m);
    expect(m.intent).toEqual({ name: 'nlu_fallback', confidence: 0.3 });
    expect(m.intentRanking[0]).toEqual({ name: 'nlu_fallback', confidence: 0.3 });
    const ambiguous = newMessage('y');
    ambiguous.intent = { name: 'a', confidence: 0.5 };
    ambiguous.intentRanking = [
      { name: 'a', confidence: 0.5 },
      { name: 'b', confidence: 0.45 },
    ];
    expect(fb.shouldFallback(ambiguous)).toBe(true);
    ambiguous.intentRanking[1] = { name: 'b', confidence: 0.3 };
    expect(fb.shouldFallback(ambiguous)).toBe(false);
  });

  it('rejects unknown and unsupported components with clear errors', async () => {
    await expect(
      trainNlu(data, { language: 'en', pipeline: [{ name: 'WhitespaceTokenizr' }] }),
    ).rejects.toThrow(/unknown component 'WhitespaceTokenizr'/);
    const err = await trainNlu(data, {
      language: 'en',
      pipeline: [{ name: 'SpacyNLP' }],
      pipelineLines: [4],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DialogueError);
    expect((err as DialogueError).code).toBe('NLU.UNSUPPORTED_COMPONENT');
    expect((err as DialogueError).message).toMatch(
      /^pipeline entry 1 \(line 4\): component 'SpacyNLP'/,
    );
    await expect(
      trainNlu(data, {
        language: 'en',
        pipeline: [{ name: 'WhitespaceTokenizer' }, { name: 'FallbackClassifier' }],
      }),
    ).rejects.toThrow(/needs an intent classifier/);
  });

  it('substitutes Python-only components when asked', async () => {
    const model = await trainNlu(
      data,
      {
        language: 'en',
        pipeline: [
          { name: 'SpacyNLP' },
          { name: 'SpacyTokenizer' },
          { name: 'SpacyFeaturizer' },
          { name: 'DIETClassifier', epochs: 5 },
        ],
      },
      { substituteUnsupported: true },
    );
    expect(model.componentNames).toEqual([
      'WhitespaceTokenizer',
      'CountVectorsFeaturizer',
      'CountVectorsFeaturizer',
      'DIETClassifier',
    ]);
    expect(model.warnings.length).toBeGreaterThan(0);
  });
});

describe('classificationReport (sklearn semantics)', () => {
  it('computes per-label metrics, averages and confusions', () => {
    const { report, precision, f1, accuracy } = classificationReport(
      ['a', 'a', 'b', 'b'],
      ['a', 'b', 'b', 'c'],
    );
    expect(report['a']).toEqual({
      precision: 1,
      recall: 0.5,
      'f1-score': 2 / 3,
      support: 2,
      confused_with: { b: 1 },
    });
    expect(report['b']).toMatchObject({
      precision: 0.5,
      recall: 0.5,
      support: 2,
      confused_with: { c: 1 },
    });
    expect(report['micro avg']).toMatchObject({ precision: 2 / 3, recall: 0.5, support: 4 });
    expect(report['accuracy']).toBeUndefined();
    expect(accuracy).toBe(0.5);
    expect(precision).toBeCloseTo(0.75);
    expect(f1).toBeCloseTo((2 / 3 + 0.5) / 2);
    expect(classificationReport(['a', 'b'], ['a', 'b']).report['accuracy']).toBe(1);
  });
});
