import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';

/**
 * Every REST route of the server (Rasa's HTTP API plus Parley's own routes and the channels the
 * fuzz server configures). `{id}` is a conversation id, `{name}` a model name, `{file}` a file name. Written out here
 * on purpose: the suite must not depend on files outside the repository at run time.
 */
export interface Route {
  /** `ALL`: a messaging connector's route, which takes any method (fuzzed mostly with POST). */
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'ALL';
  readonly path: string;
  /** True when the route needs a token or JWT (the fuzz server sets both). */
  readonly auth: boolean;
  /** Keys of a plausible body, filled with random values of random types. */
  readonly keys?: readonly string[];
  /** The route reads YAML (or Markdown) text. */
  readonly yaml?: boolean;
}

export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/', auth: false },
  { method: 'GET', path: '/version', auth: false },
  { method: 'GET', path: '/status', auth: true },
  { method: 'GET', path: '/health/live', auth: false },
  { method: 'GET', path: '/health/ready', auth: false },
  { method: 'GET', path: '/license', auth: false },
  { method: 'GET', path: '/domain', auth: true },
  { method: 'GET', path: '/flows', auth: true },
  { method: 'GET', path: '/models/{name}', auth: true },
  { method: 'POST', path: '/model/parse', auth: true, keys: ['text', 'message_id'] },
  {
    method: 'POST',
    path: '/model/train',
    auth: true,
    yaml: true,
    keys: ['domain', 'config', 'nlu', 'stories', 'rules', 'responses', 'force'],
  },
  { method: 'POST', path: '/model/test/intents', auth: true, yaml: true, keys: ['rasa_nlu_data'] },
  { method: 'POST', path: '/model/test/stories', auth: true, yaml: true },
  { method: 'POST', path: '/model/predict', auth: true, keys: ['event', 'timestamp', 'name'] },
  { method: 'DELETE', path: '/model', auth: true },
  {
    method: 'PUT',
    path: '/model',
    auth: true,
    keys: ['model_file', 'model_server', 'remote_storage'],
  },
  { method: 'GET', path: '/conversations/{id}/tracker', auth: true },
  { method: 'DELETE', path: '/conversations/{id}/tracker', auth: true },
  {
    method: 'POST',
    path: '/conversations/{id}/tracker/events',
    auth: true,
    keys: ['event', 'timestamp', 'name', 'value', 'text', 'parse_data', 'metadata'],
  },
  {
    method: 'PUT',
    path: '/conversations/{id}/tracker/events',
    auth: true,
    keys: ['event', 'timestamp', 'name', 'value'],
  },
  { method: 'GET', path: '/conversations/{id}/story', auth: true },
  { method: 'GET', path: '/conversations/{id}/test_case', auth: true },
  {
    method: 'POST',
    path: '/conversations/{id}/messages',
    auth: true,
    keys: ['text', 'sender', 'parse_data'],
  },
  {
    method: 'POST',
    path: '/conversations/{id}/execute',
    auth: true,
    keys: ['name', 'policy', 'confidence'],
  },
  {
    method: 'POST',
    path: '/conversations/{id}/trigger_intent',
    auth: true,
    keys: ['name', 'entities'],
  },
  { method: 'POST', path: '/conversations/{id}/predict', auth: true },
  { method: 'GET', path: '/webhooks/rest/', auth: false },
  {
    method: 'POST',
    path: '/webhooks/rest/webhook',
    auth: false,
    keys: ['sender', 'message', 'metadata', 'input_channel'],
  },
  { method: 'GET', path: '/webhooks/socketio/', auth: false },
  { method: 'GET', path: '/webhooks/genesys/', auth: false },
  { method: 'GET', path: '/webhooks/genesys/metrics', auth: false },
  // The messaging and voice connectors the fuzz server configures (their platforms' APIs at a
  // closed port), at Rasa's paths.
  { method: 'GET', path: '/webhooks/slack/', auth: false },
  { method: 'GET', path: '/webhooks/telegram/', auth: false },
  { method: 'GET', path: '/webhooks/facebook/', auth: false },
  { method: 'GET', path: '/webhooks/twilio/', auth: false },
  { method: 'GET', path: '/webhooks/twilio_voice/', auth: false },
  { method: 'GET', path: '/webhooks/botframework/', auth: false },
  { method: 'GET', path: '/webhooks/webexteams/', auth: false },
  { method: 'GET', path: '/webhooks/hangouts/', auth: false },
  { method: 'GET', path: '/webhooks/mattermost/', auth: false },
  { method: 'GET', path: '/webhooks/rocketchat/', auth: false },
  { method: 'GET', path: '/webhooks/audiocodes/', auth: false },
  { method: 'GET', path: '/webhooks/jambonz/', auth: false },
  { method: 'ALL', path: '/webhooks/slack/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/telegram/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/telegram/set_webhook', auth: false },
  { method: 'ALL', path: '/webhooks/facebook/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/twilio/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/twilio_voice/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/botframework/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/webexteams/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/hangouts/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/mattermost/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/rocketchat/webhook', auth: false },
  { method: 'ALL', path: '/webhooks/audiocodes/webhook', auth: false, keys: ['conversation'] },
  {
    method: 'ALL',
    path: '/webhooks/audiocodes/conversation/:conversation_id/activities',
    auth: false,
    keys: ['activities', 'reason'],
  },
  {
    method: 'ALL',
    path: '/webhooks/audiocodes/conversation/:conversation_id/disconnect',
    auth: false,
    keys: ['activities', 'reason'],
  },
  {
    method: 'ALL',
    path: '/webhooks/audiocodes/conversation/:conversation_id/keepalive',
    auth: false,
    keys: ['activities', 'reason'],
  },
  { method: 'ALL', path: '/webhooks/jambonz/websocket', auth: false },
  { method: 'GET', path: '/metrics', auth: false },
  { method: 'GET', path: '/review/', auth: false },
  { method: 'GET', path: '/review/assets/{file}', auth: false },
];

/** `GET /conversations/{id}/tracker`: how a route is named in counters and messages. */
export function routeName(route: Route): string {
  return `${route.method} ${route.path}`;
}

/** Query parameters the routes read, plus unknown ones. */
const QUERY_KEYS = [
  'token',
  'include_events',
  'until',
  'output_channel',
  'execute_side_effects',
  'emulation_mode',
  'callback_url',
  'save_to_default_model_directory',
  'force_training',
  'augmentation',
  'num_threads',
  'e2e',
  'disagreement_ignore',
  'all_sessions',
  'format',
  'model',
  'cross_validation_folds',
  'x',
  'token[]',
  'include_events[a]',
  '__proto__',
  'constructor[prototype][x]',
];

const CONTENT_TYPES = [
  null,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'application/x-yaml',
  'text/yaml',
  'application/yaml; charset=utf-8',
  'text/plain',
  'text/markdown',
  'application/octet-stream',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=xyz',
  'application/gzip',
  '*/*',
  '',
  ';;;',
  'application/json; charset=',
];

/**
 * Percent-encodes the UTF-8 bytes of `s` (lone surrogates included, as the replacement
 * character), where encodeURIComponent would throw.
 */
export function encode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A short printable or odd text (bounded). */
const oddText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', '\u202e', 'é', '😀', '\r\n', '%00'),
);

/** Any JSON value of bounded size, wrong types everywhere. */
export const anyJson = fc.jsonValue({ maxDepth: 4 });

/** A body the server gets, in a compact form (materialized by bodyBytes). */
export type BodySpec =
  | { kind: 'empty' }
  | { kind: 'json'; value: unknown }
  | { kind: 'shaped'; value: Record<string, unknown> }
  | { kind: 'wide'; width: number; asArray: boolean }
  | { kind: 'huge'; size: number; char: string; field: string }
  | { kind: 'yaml'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; hex: string }
  | { kind: 'deep'; depth: number; open: string };

function shaped(keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.constantFrom(...keys, 'x', '__proto__'), anyJson, { maxKeys: 6 });
}

/** A random YAML text: a dumped random value, anchors and aliases, tabs, tags, garbage. */
export const yamlText: fc.Arbitrary<string> = fc.oneof(
  anyJson.map((v) => toYaml(v)),
  fc
    .record({
      version: fc.oneof(fc.constant('3.1'), oddText),
      nlu: fc.array(
        fc.record({ intent: oddText, examples: fc.oneof(oddText, fc.constant('- hi\n- hey')) }),
        { maxLength: 3 },
      ),
      stories: fc.array(fc.record({ story: oddText, steps: anyJson }), { maxLength: 2 }),
    })
    .map((v) => toYaml(v)),
  fc.constantFrom(
    'a: &x [1, 2]\nb: *x\nc: *x\n',
    'a: !!binary aGk=\n',
    'a: !!js/function "x"\n',
    '%YAML 1.1\n---\nkey: value\n',
    '\tkey: value\n',
    'key: [unclosed\n',
    '? complex\n: key\n',
    '---\n...\n---\n',
    'a: b\na: c\n',
    '<<: {a: 1}\n',
    'nlu:\n- intent: greet\n  examples: |\n    - hi\n',
    '## intent:greet\n- hi\n',
  ),
  fc.string({ maxLength: 200 }),
);

/**
 * How often the body shapes come: `even` (each as often), or `mostly-small` for long runs (small
 * JSON, YAML, text and bytes; the costly wide, huge and deep bodies together one case in 15–20).
 */
export type BodyMix = 'even' | 'mostly-small';

/** Bodies for a route: the route's keys with wrong types, random JSON, YAML, bytes, empty. */
export function bodyFor(route: Route, mix: BodyMix = 'even'): fc.Arbitrary<BodySpec> {
  const small = mix === 'even' ? 1 : 8;
  const options: Array<fc.WeightedArbitrary<BodySpec>> = [
    { weight: small, arbitrary: fc.constant<BodySpec>({ kind: 'empty' }) },
    { weight: small, arbitrary: anyJson.map<BodySpec>((value) => ({ kind: 'json', value })) },
    {
      weight: 1,
      arbitrary: fc
        .record({ width: fc.integer({ min: 1, max: 5000 }), asArray: fc.boolean() })
        .map<BodySpec>((w) => ({ kind: 'wide', ...w })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          size: fc.integer({ min: 1_000, max: 200_000 }),
          char: fc.constantFrom('a', 'é', '😀', ' ', '\\u0000', '{'),
          field: fc.constantFrom(...(route.keys ?? ['text'])),
        })
        .map<BodySpec>((h) => ({ kind: 'huge', ...h })),
    },
    { weight: small, arbitrary: yamlText.map<BodySpec>((text) => ({ kind: 'yaml', text })) },
    {
      weight: small,
      arbitrary: fc.string({ maxLength: 200 }).map<BodySpec>((text) => ({ kind: 'text', text })),
    },
    {
      weight: small,
      arbitrary: fc
        .uint8Array({ maxLength: 64 })
        .map<BodySpec>((b) => ({ kind: 'bytes', hex: Buffer.from(b).toString('hex') })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({ depth: fc.integer({ min: 2, max: 40 }), open: fc.constantFrom('[', '{"a":') })
        .map<BodySpec>((d) => ({ kind: 'deep', ...d })),
    },
  ];
  if (route.keys) {
    const shapedBody = shaped(route.keys).map<BodySpec>((value) => ({ kind: 'shaped', value }));
    options.push({ weight: 2 * small, arbitrary: shapedBody });
  }
  if (route.yaml) {
    options.push({
      weight: small,
      arbitrary: yamlText.map<BodySpec>((text) => ({ kind: 'yaml', text })),
    });
  }
  return fc.oneof(...options);
}

/** A JSON text nested `depth` levels deep (arrays or objects). */
export function deepJson(depth: number, open: string): string {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

export function bodyBytes(spec: BodySpec): Buffer {
  switch (spec.kind) {
    case 'empty':
      return Buffer.alloc(0);
    case 'json':
    case 'shaped':
      return Buffer.from(JSON.stringify(spec.value) ?? 'null');
    case 'wide':
      return Buffer.from(
        spec.asArray
          ? JSON.stringify(Array.from({ length: spec.width }, (_, i) => i))
          : JSON.stringify(
              Object.fromEntries(Array.from({ length: spec.width }, (_, i) => [`k${i}`, i])),
            ),
      );
    case 'huge': {
      const text =
        spec.char === '{' ? '{'.repeat(spec.size) : JSON.stringify(spec.char.repeat(spec.size));
      return Buffer.from(spec.char === '{' ? text : `{${JSON.stringify(spec.field)}:${text}}`);
    }
    case 'yaml':
    case 'text':
      return Buffer.from(spec.text);
    case 'bytes':
      return Buffer.from(spec.hex, 'hex');
    case 'deep':
      return Buffer.from(deepJson(spec.depth, spec.open));
  }
}

/** Conversation ids and model names as they appear in a path (already percent-encoded or raw). */
export const oddId: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9_-]{1,24}$/) },
  {
    weight: 3,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encode),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%00',
      'a%00b',
      '%ED%A0%80', // a lone surrogate in UTF-8 (invalid)
      '%F0%9F', // a truncated sequence
      '%FF%FE',
      '%ZZ',
      '%',
      '..',
      '%2e%2e',
      '..%2F..%2Fetc%2Fpasswd',
      'a/b/c',
      '%2F',
      '.',
      '~',
      '%20',
      '%E2%80%AE',
      'latest',
      '__proto__',
      'constructor',
    ),
  },
);

/** Query strings: known and unknown keys, arrays, nested keys, odd values and encodings. */
export const queryString: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.constantFrom(...QUERY_KEYS),
      fc.oneof(
        fc.constantFrom(
          '',
          'true',
          'false',
          '0',
          '-1',
          '1e309',
          'NaN',
          'AFTER',
          'all',
          '%00',
          '%ZZ',
        ),
        oddText.map(encode),
      ),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

export type AuthMode = 'none' | 'token' | 'wrong-token' | 'jwt' | 'garbage-jwt' | 'basic';
export const authMode = fc.constantFrom<AuthMode>(
  'none',
  'token',
  'wrong-token',
  'jwt',
  'garbage-jwt',
  'basic',
);

/** One REST request, compact and printable (materialized by the spec). */
/** A path segment: as it is, or `unit` repeated `times` times (printed compactly). */
export type PathId = string | { readonly unit: string; readonly times: number };

export function pathId(id: PathId): string {
  return typeof id === 'string' ? id : id.unit.repeat(id.times);
}

export interface RestCase {
  readonly route: Route;
  readonly method: string;
  readonly id: PathId;
  readonly query: string;
  readonly auth: AuthMode;
  readonly contentType: string | null;
  readonly accept: string | null;
  readonly body: BodySpec;
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

/** A request to one of the routes with odd ids/queries/headers/bodies (ids from `ids`). */
export function restCase(ids: fc.Arbitrary<PathId>): fc.Arbitrary<RestCase> {
  return fc.constantFrom(...ROUTES).chain((route) => restCaseFor(route, ids));
}

/**
 * A request to `route` (its method mostly, sometimes another) with odd ids/queries/headers and
 * bodies (`mix`: see BodyMix).
 */
export function restCaseFor(
  route: Route,
  ids: fc.Arbitrary<PathId>,
  mix: BodyMix = 'even',
): fc.Arbitrary<RestCase> {
  return fc.record({
    route: fc.constant(route),
    method: fc.oneof(
      { weight: 4, arbitrary: fc.constant<string>(route.method === 'ALL' ? 'POST' : route.method) },
      { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
    ),
    id: ids,
    query: queryString,
    auth: authMode,
    contentType: fc.constantFrom(...CONTENT_TYPES),
    accept: fc.constantFrom(null, '*/*', 'application/json', 'text/html', 'application/x-yaml'),
    body: bodyFor(route, mix),
  });
}
