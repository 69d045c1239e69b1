import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  BUILTIN_WINDOW_CHARS,
  MAX_BUILTIN_CHARS,
  windows,
} from 'src/core/nlu/components/duckling-builtin';
import { ducklingValue } from 'src/core/nlu/components/duckling-entity-extractor';
import { type ParsedEntity } from 'src/core/nlu/message';
import { loadNlu, trainNlu, type TrainedNlu } from 'src/core/nlu/pipeline';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { type NluTrainingData } from 'src/core/training-data/nlu-training-data';

const data: NluTrainingData = {
  examples: [
    { text: 'hello', intent: 'greet', entities: [] },
    { text: 'hi there', intent: 'greet', entities: [] },
    { text: 'remind me tomorrow', intent: 'remind', entities: [] },
    { text: 'I want 3 pizzas', intent: 'order', entities: [] },
  ],
  synonyms: {},
  regexFeatures: [],
  lookupTables: [],
  responses: {},
};

/** 2026-11-29 10:00:00 UTC (a Sunday). */
const REF = Date.UTC(2026, 10, 29, 10, 0, 0);

async function train(extractor: ComponentConfig, language = 'en'): Promise<TrainedNlu> {
  return trainNlu(data, {
    language,
    pipeline: [{ name: 'WhitespaceTokenizer' }, { name: 'KeywordIntentClassifier' }, extractor],
  });
}

const byDim = (entities: ParsedEntity[], dim: string): ParsedEntity[] =>
  entities.filter((e) => e.entity === dim);

describe('DucklingEntityExtractor without a url (built in)', () => {
  let nlu: TrainedNlu;
  beforeAll(async () => {
    nlu = await train({ name: 'DucklingEntityExtractor' });
  });

  it('warns at training and at load that the built-in extractor answers', () => {
    expect(nlu.warnings.some((w) => /built-in extractor/.test(w))).toBe(true);
    const loaded = loadNlu(JSON.parse(JSON.stringify(nlu.toJSON())));
    expect(loaded.notices).toHaveLength(1);
    expect(loaded.notices[0]).toMatch(/DucklingEntityExtractor: no 'url'/);
    expect(loaded.needsAsync).toBe(false);
  });

  it('answers numbers in Rasa’s Duckling entity shape, the number not also inside other results', () => {
    const r = nlu.parse('I want 3 pizzas', { referenceTime: REF });
    expect(r.entities).toEqual([
      {
        start: 7,
        end: 8,
        text: '3',
        value: 3,
        confidence: 1.0,
        additional_info: { value: 3, type: 'value' },
        entity: 'number',
        extractor: 'DucklingEntityExtractor',
      },
    ]);
  });

  it('answers times with grain, relative to the reference time, in the timezone', () => {
    const r = nlu.parse('remind me tomorrow at 5pm please', { referenceTime: REF });
    expect(r.entities.map((e) => e.entity)).toEqual(['time']);
    const time = r.entities[0];
    expect(time).toMatchObject({ start: 10, end: 25, text: 'tomorrow at 5pm' });
    expect(time?.value).toBe('2026-11-30T17:00:00.000+00:00');
    expect(time?.additional_info).toMatchObject({
      value: '2026-11-30T17:00:00.000+00:00',
      grain: 'hour',
      type: 'value',
    });
    // A bare hour already past today is tomorrow's.
    expect(nlu.parse('at 9am', { referenceTime: REF }).entities[0]?.value).toBe(
      '2026-11-30T09:00:00.000+00:00',
    );
    expect(nlu.parse('at 11am', { referenceTime: REF }).entities[0]?.value).toBe(
      '2026-11-29T11:00:00.000+00:00',
    );
  });

  it('answers intervals as from/to, as Rasa does', () => {
    const r = nlu.parse('between 3 and 5pm tomorrow', { referenceTime: REF });
    const time = byDim(r.entities, 'time')[0];
    expect(time?.value).toEqual({
      to: '2026-11-30T17:00:00.000+00:00',
      from: '2026-11-30T15:00:00.000+00:00',
    });
    expect(time?.additional_info).toMatchObject({ type: 'interval' });
    // Times of day: the range's next occurrence, ending after it starts.
    const late = Date.UTC(2026, 10, 29, 15, 0, 0);
    expect(nlu.parse('from 2pm to 4pm', { referenceTime: late }).entities[0]?.value).toEqual({
      to: '2026-11-30T16:00:00.000+00:00',
      from: '2026-11-30T14:00:00.000+00:00',
    });
    expect(nlu.parse('from 10pm to 2am', { referenceTime: REF }).entities[0]?.value).toEqual({
      to: '2026-11-30T02:00:00.000+00:00',
      from: '2026-11-29T22:00:00.000+00:00',
    });
  });

  it('answers the other dimensions with Duckling’s names and units', () => {
    const parse = (text: string): ParsedEntity[] =>
      nlu.parse(text, { referenceTime: REF }).entities;
    expect(parse('the 2nd').map((e) => [e.entity, e.value])).toEqual([['ordinal', 2]]);
    expect(parse('it costs 10 euros').map((e) => [e.entity, e.value, e.additional_info])).toEqual([
      ['amount-of-money', 10, { value: 10, type: 'value', unit: 'EUR' }],
    ]);
    expect(parse('for 3 hours')[0]).toMatchObject({
      entity: 'duration',
      value: 3,
      additional_info: { unit: 'hour', normalized: { value: 10800, unit: 'second' } },
    });
    expect(parse('it is 5 km away')[0]).toMatchObject({
      entity: 'distance',
      value: 5,
      additional_info: { unit: 'kilometre' },
    });
    expect(parse('70 degrees fahrenheit')[0]).toMatchObject({
      entity: 'temperature',
      value: 70,
      additional_info: { unit: 'fahrenheit' },
    });
    expect(parse('mail a.b@example.com').map((e) => [e.entity, e.value])).toEqual([
      ['email', 'a.b@example.com'],
    ]);
    expect(parse('see https://example.com/x please').map((e) => [e.entity, e.value])).toEqual([
      ['url', 'https://example.com/x'],
    ]);
    expect(byDim(parse('call +1 650 555 1234'), 'phone-number').map((e) => e.value)).toEqual([
      '+16505551234',
    ]);
  });

  it('honours dimensions and timezone', async () => {
    const only = await train({
      name: 'DucklingEntityExtractor',
      dimensions: ['number'],
      timezone: 'Europe/Berlin',
    });
    const r = only.parse('3 pizzas tomorrow at 5pm', { referenceTime: REF });
    expect(r.entities.map((e) => e.entity)).toEqual(['number']);
    const berlin = await train({ name: 'DucklingEntityExtractor', timezone: 'Europe/Berlin' });
    expect(berlin.parse('tomorrow at 5pm', { referenceTime: REF }).entities[0]?.value).toBe(
      '2026-11-30T17:00:00.000+01:00',
    );
  });

  it('reads at most the first characters of a message, in windows', () => {
    const long = `${'blah '.repeat(200)} 42 pizzas`;
    expect(nlu.parse(long, { referenceTime: REF }).entities).toEqual([]);
    expect(windows('aaaa bbbb cccc dddd', 19, 10)).toEqual([
      { start: 0, end: 9 },
      { start: 10, end: 19 },
    ]);
    // Cut at the limit, the text ends at a whitespace rather than inside a word.
    expect(windows('aaaa bbbb cccc dddd', 12, 10)).toEqual([{ start: 0, end: 9 }]);
    expect(nlu.parse(`${'x '.repeat(299)}1234`, { referenceTime: REF }).entities).toEqual([]);
    const spans = windows('x '.repeat(1000), MAX_BUILTIN_CHARS, BUILTIN_WINDOW_CHARS);
    expect(spans.every((s) => s.end - s.start <= BUILTIN_WINDOW_CHARS)).toBe(true);
    expect(spans[spans.length - 1]?.end).toBeLessThanOrEqual(MAX_BUILTIN_CHARS);
  });

  it('reads a window dense with numbers for numbers only', () => {
    const dense = nlu.parse('1 2 3 4 5 6 7 tomorrow at 5pm', { referenceTime: REF }).entities;
    expect(dense.map((e) => e.entity)).toEqual(Array(7).fill('number'));
    const sparse = nlu.parse('1 2 3 tomorrow at 5pm', { referenceTime: REF }).entities;
    expect(sparse.map((e) => e.entity)).toEqual(['number', 'number', 'number', 'time']);
  });

  it('offsets are code points in the parse result', () => {
    const r = nlu.parse('😀 I want 3', { referenceTime: REF });
    expect(r.entities[0]).toMatchObject({ start: 9, end: 10, value: 3 });
  });
});

describe('DucklingEntityExtractor with a url (a Duckling server)', () => {
  let server: Server;
  let url: string;
  const requests: Array<{ path: string; contentType: string; form: URLSearchParams }> = [];
  let answer: (form: URLSearchParams) => { status: number; body: string } = () => ({
    status: 200,
    body: '[]',
  });

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => resolve(body));
    });

  beforeAll(async () => {
    // Duckling's HTTP API: POST /parse, form-encoded text, locale, tz, dims, reftime; answers a
    // JSON list of {body, start, end, dim, latent, value}.
    server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const form = new URLSearchParams(body);
        requests.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          form,
        });
        const out = answer(form);
        res.writeHead(out.status, { 'Content-Type': 'application/json' });
        res.end(out.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('posts the form Rasa posts and maps each result as Rasa does', async () => {
    const nlu = await train({
      name: 'DucklingEntityExtractor',
      url,
      locale: 'en_GB',
      timezone: 'Europe/London',
      dimensions: ['time', 'number'],
    });
    expect(nlu.needsAsync).toBe(true);
    expect(nlu.warnings.some((w) => /built-in/.test(w))).toBe(false);
    answer = () => ({
      status: 200,
      body: JSON.stringify([
        {
          body: 'tomorrow',
          start: 10,
          end: 18,
          dim: 'time',
          latent: false,
          value: {
            values: [{ value: '2026-11-30T00:00:00.000+00:00', grain: 'day', type: 'value' }],
            value: '2026-11-30T00:00:00.000+00:00',
            grain: 'day',
            type: 'value',
          },
        },
        {
          body: 'from 2 to 4pm',
          start: 19,
          end: 32,
          dim: 'time',
          latent: false,
          value: {
            type: 'interval',
            from: { value: '2026-11-30T14:00:00.000+00:00', grain: 'hour' },
            to: { value: '2026-11-30T17:00:00.000+00:00', grain: 'hour' },
          },
        },
        {
          body: 'after 6pm',
          start: 33,
          end: 42,
          dim: 'time',
          latent: false,
          value: { type: 'interval', from: { value: '2026-11-30T18:00:00.000+00:00' } },
        },
        {
          body: '3',
          start: 43,
          end: 44,
          dim: 'number',
          latent: false,
          value: { value: 3, type: 'value' },
        },
        {
          body: '3 km',
          start: 43,
          end: 47,
          dim: 'distance',
          latent: false,
          value: { value: 3, type: 'value', unit: 'kilometre' },
        },
      ]),
    });
    const r = await nlu.parseAsync('remind me tomorrow from 2 to 4pm after 6pm 3 km', {
      referenceTime: REF,
    });
    const sent = requests[requests.length - 1];
    expect(sent?.path).toBe('/parse');
    expect(sent?.contentType).toBe('application/x-www-form-urlencoded; charset=UTF-8');
    expect(Object.fromEntries(sent?.form ?? [])).toEqual({
      text: 'remind me tomorrow from 2 to 4pm after 6pm 3 km',
      locale: 'en_GB',
      tz: 'Europe/London',
      dims: '["time","number"]',
      reftime: String(REF),
    });
    expect(r.entities).toEqual([
      {
        start: 10,
        end: 18,
        text: 'tomorrow',
        value: '2026-11-30T00:00:00.000+00:00',
        confidence: 1.0,
        additional_info: {
          values: [{ value: '2026-11-30T00:00:00.000+00:00', grain: 'day', type: 'value' }],
          value: '2026-11-30T00:00:00.000+00:00',
          grain: 'day',
          type: 'value',
        },
        entity: 'time',
        extractor: 'DucklingEntityExtractor',
      },
      expect.objectContaining({
        value: { to: '2026-11-30T17:00:00.000+00:00', from: '2026-11-30T14:00:00.000+00:00' },
      }),
      expect.objectContaining({ value: { to: null, from: '2026-11-30T18:00:00.000+00:00' } }),
      expect.objectContaining({ entity: 'number', value: 3 }),
    ]);
    // The synchronous parse does not ask the server.
    const before = requests.length;
    expect(nlu.parse('tomorrow').entities).toEqual([]);
    expect(requests.length).toBe(before);
  });

  it('reports a failing server and parses on without its entities', async () => {
    const nlu = await train({ name: 'DucklingEntityExtractor', url });
    answer = () => ({ status: 500, body: 'boom' });
    const warnings: string[] = [];
    const r = await nlu.parseAsync('tomorrow', { onWarning: (w) => warnings.push(w) });
    expect(r.entities).toEqual([]);
    expect(r.intent.name).not.toBeUndefined();
    expect(warnings[0]).toMatch(/Status Code: 500\. Response: boom/);
    const sent = requests[requests.length - 1];
    // Without a locale or timezone Rasa sends none; dims `null` means every dimension.
    expect(sent?.form.has('locale')).toBe(false);
    expect(sent?.form.has('tz')).toBe(false);
    expect(sent?.form.get('dims')).toBe('null');
  });

  it('reports an unreachable server and answers with the built-in extractor', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const nlu = await train({ name: 'DucklingEntityExtractor', url: `http://127.0.0.1:${port}` });
    const warnings: string[] = [];
    const r = await nlu.parseAsync('3 pizzas tomorrow', {
      onWarning: (w) => warnings.push(w),
      referenceTime: REF,
    });
    expect(r.entities).toEqual([
      expect.objectContaining({ entity: 'number', value: 3, start: 0, end: 1 }),
      expect.objectContaining({
        entity: 'time',
        text: 'tomorrow',
        value: '2026-11-30T00:00:00.000+00:00',
        extractor: 'DucklingEntityExtractor',
      }),
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /Failed to connect to duckling http server at 'http:\/\/127\.0\.0\.1:\d+\/parse'/,
    );
    expect(warnings[0]).toMatch(/ECONNREFUSED.*built-in extractor answered instead/);
  });

  it('maps code-point offsets of the server to the text', async () => {
    const nlu = await train({ name: 'DucklingEntityExtractor', url });
    answer = () => ({
      status: 200,
      body: JSON.stringify([
        { body: '3', start: 2, end: 3, dim: 'number', value: { value: 3, type: 'value' } },
      ]),
    });
    const r = await nlu.parseAsync('😀 3', { utf16Offsets: true });
    expect(r.entities[0]).toMatchObject({ start: 3, end: 4, value: 3 });
  });

  it('RASA_DUCKLING_HTTP_URL names the server, over the url or without one (as in Rasa)', async () => {
    const saved = process.env['RASA_DUCKLING_HTTP_URL'];
    process.env['RASA_DUCKLING_HTTP_URL'] = url;
    try {
      const nlu = await train({ name: 'DucklingEntityExtractor' });
      expect(nlu.needsAsync).toBe(true);
      expect(nlu.notices).toEqual([]);
      answer = () => ({
        status: 200,
        body: JSON.stringify([
          { body: '9', start: 0, end: 1, dim: 'number', value: { value: 9, type: 'value' } },
        ]),
      });
      expect((await nlu.parseAsync('9')).entities.map((e) => e.value)).toEqual([9]);
    } finally {
      if (saved === undefined) delete process.env['RASA_DUCKLING_HTTP_URL'];
      else process.env['RASA_DUCKLING_HTTP_URL'] = saved;
    }
  });

  it('ducklingValue follows Rasa’s extract_value', () => {
    expect(ducklingValue({ value: 5, type: 'value' })).toBe(5);
    expect(ducklingValue({ type: 'interval', to: { value: 'b' } })).toEqual({
      to: 'b',
      from: null,
    });
    expect(ducklingValue({ unit: 'x' })).toBeNull();
  });
});

describe('SpacyEntityExtractor (built-in substitute)', () => {
  it('answers PERSON, GPE and ORG with spaCy’s labels and Rasa’s shape, and warns', async () => {
    const nlu = await train({ name: 'SpacyEntityExtractor' });
    expect(nlu.warnings.some((w) => /substitute/.test(w))).toBe(true);
    expect(loadNlu(nlu.toJSON()).notices[0]).toMatch(
      /SpacyEntityExtractor: spaCy is not available/,
    );
    const r = nlu.parse('My name is John Smith and I work at Google in New York.');
    expect(r.entities).toEqual([
      {
        entity: 'PERSON',
        value: 'John Smith',
        start: 11,
        confidence: null,
        end: 21,
        extractor: 'SpacyEntityExtractor',
      },
      expect.objectContaining({ entity: 'ORG', value: 'Google', start: 36, end: 42 }),
      expect.objectContaining({ entity: 'GPE', value: 'New York', start: 46, end: 54 }),
    ]);
  });

  it('honours dimensions', async () => {
    const nlu = await train({ name: 'SpacyEntityExtractor', dimensions: ['GPE'] });
    const r = nlu.parse('John Smith lives in Berlin');
    expect(r.entities.map((e) => [e.entity, e.value])).toEqual([['GPE', 'Berlin']]);
  });

  it('is kept by the substitution of a spaCy pipeline', async () => {
    const nlu = await trainNlu(
      data,
      {
        language: 'en',
        pipeline: [
          { name: 'SpacyNLP' },
          { name: 'SpacyTokenizer' },
          { name: 'KeywordIntentClassifier' },
          { name: 'SpacyEntityExtractor' },
          { name: 'DucklingHTTPExtractor', dimensions: ['number'] },
        ],
      },
      { substituteUnsupported: true },
    );
    expect(nlu.componentNames).toEqual([
      'WhitespaceTokenizer',
      'KeywordIntentClassifier',
      'SpacyEntityExtractor',
      'DucklingEntityExtractor',
    ]);
    const r = nlu.parse('Sarah wants 2 pizzas');
    expect(r.entities.map((e) => [e.entity, e.value])).toEqual([
      ['PERSON', 'Sarah'],
      ['number', 2],
    ]);
  });
});
