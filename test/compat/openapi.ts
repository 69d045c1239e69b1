/**
 * Response validation against Rasa's published OpenAPI 3.0 spec
 * (shared/reference/rasa-openapi.yml, a verbatim copy of `docs/static/spec/rasa.yml`).
 *
 * Usage in e2e specs, only where the spec documents the route:
 *
 *   expectMatchesOpenApi('get', '/conversations/{conversation_id}/tracker', res.status, res.body);
 *
 * The YAML is loaded once, patched in memory with the explicit OPENAPI_OVERRIDES below (places where
 * the spec is plainly wrong about what the real Rasa server sends), and registered as one ajv schema
 * with the id SPEC_ID. A response schema is then compiled as `{ $ref: "<SPEC_ID>#/<json pointer>" }`,
 * so every `#/components/...` reference inside the spec resolves against the spec itself.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from 'test/compat/shared';
import { parse } from 'yaml';

export const RASA_OPENAPI_PATH = join(SHARED, 'reference', 'rasa-openapi.yml');

const SPEC_ID = 'rasa-openapi';
const SCHEMAS = '/components/schemas';
const MAX_LISTED_ERRORS = 25;
const MAX_BODY_CHARS = 1500;

/**
 * One in-memory correction of the spec. `spec` is what the spec says at `at` (checked when loading,
 * so a changed spec fails loudly instead of being patched blindly); `undefined` means "absent".
 * `merge` adds the keys of `real` to the node; `replace` swaps the node (or creates it) for `real`.
 */
export interface OpenApiOverride {
  /** JSON pointer into the parsed spec. */
  at: string;
  mode: 'merge' | 'replace';
  spec: unknown;
  real: unknown;
  /** The discrepancy, with its source (rasa-http-api.md section or Rasa source). */
  why: string;
}

const PRO_EVENT_TYPES = [
  'flow_started',
  'flow_interrupted',
  'flow_resumed',
  'flow_completed',
  'flow_cancelled',
  'agent_started',
  'agent_completed',
  'agent_interrupted',
  'agent_resumed',
  'agent_cancelled',
  'stack',
  'routing_session_ended',
  'session_ended',
  'error',
];

const TRACKER_KEYS = [
  'sender_id',
  'slots',
  'latest_message',
  'latest_event_time',
  'followup_action',
  'paused',
  'events',
  'latest_input_channel',
  'active_loop',
  'latest_action',
  'latest_action_name',
];

/**
 * Every place where we deliberately deviate from the spec text. Nothing else is loosened.
 * "§n" refers to shared/reference/rasa-http-api.md.
 *
 * Not an override: §16 says the spec's tracker `slots` is an array. That is true of older spec
 * versions only; in this copy `Tracker.slots` is `$ref: Slot`, an object map, which matches the real
 * server (only its `type: any` value schema needed fixing, first entry).
 */
export const OPENAPI_OVERRIDES: readonly OpenApiOverride[] = [
  // ---- invalid schema text ------------------------------------------------------------------
  {
    at: `${SCHEMAS}/Slot/additionalProperties`,
    mode: 'replace',
    spec: { type: 'any' },
    real: {},
    why:
      '`type: any` is not a JSON Schema / OpenAPI type (ajv refuses to compile it). The intent is ' +
      '"any value": real slot values are arbitrary JSON including null (§5.5 example, §8).',
  },
  // ---- Tracker (rasa/shared/core/trackers.py current_state, §8) -----------------------------
  {
    at: `${SCHEMAS}/Tracker/properties/sender_id`,
    mode: 'replace',
    spec: undefined,
    real: {
      type: 'string',
      description: 'ID of the conversation (the spec calls it conversation_id)',
    },
    why: 'The spec names the id `conversation_id`; the real server sends `sender_id` (§8, §16).',
  },
  {
    at: `${SCHEMAS}/Tracker/required`,
    mode: 'replace',
    spec: undefined,
    real: TRACKER_KEYS,
    why:
      'Tightening: current_state always emits these keys (§8 "key order as emitted"), so a ' +
      'wire-compatible tracker must carry all of them; the spec lists no required keys at all.',
  },
  {
    at: `${SCHEMAS}/Tracker/properties/latest_event_time`,
    mode: 'merge',
    spec: { type: 'number' },
    real: { nullable: true },
    why: '`latest_event_time` is null for a tracker without events (e.g. after PUT events []) (§8).',
  },
  {
    at: `${SCHEMAS}/Tracker/properties/followup_action`,
    mode: 'merge',
    spec: { type: 'string' },
    real: { nullable: true },
    why: '`followup_action` is null after any action/user event (§5.5 example, §8).',
  },
  {
    at: `${SCHEMAS}/Tracker/properties/events`,
    mode: 'replace',
    spec: { $ref: '#/components/schemas/EventList' },
    real: {
      description: 'Event history; null for include_events=NONE',
      type: 'array',
      nullable: true,
      items: { $ref: '#/components/schemas/Event' },
    },
    why: '`include_events=NONE` yields `events: null`, not [] (§8, §16).',
  },
  {
    at: `${SCHEMAS}/Tracker/properties/latest_input_channel`,
    mode: 'merge',
    spec: { type: 'string' },
    real: { nullable: true },
    why: '`latest_input_channel` is null until a user event carries a channel (§5.5 example, §8).',
  },
  {
    at: `${SCHEMAS}/Tracker/properties/latest_action_name`,
    mode: 'merge',
    spec: { type: 'string' },
    real: { nullable: true },
    why:
      '`latest_action_name` is null while `latest_action` is {} (fresh tracker, after restart, ' +
      'PUT without action events) (§8).',
  },
  // ---- ParseResult / Intent / Entity: tracker latest_message and user-event parse_data --------
  {
    at: `${SCHEMAS}/ParseResult/properties/text`,
    mode: 'merge',
    spec: { type: 'string' },
    real: { nullable: true },
    why:
      'The empty `latest_message` has `text: null` (§5.5 example, §8), and user events may have ' +
      'text null (Rasa EVENTS_SCHEMA: parse_data.text string|null, §4).',
  },
  {
    at: `${SCHEMAS}/ParseResult/properties/intent`,
    mode: 'replace',
    spec: { $ref: '#/components/schemas/Intent' },
    real: {
      type: 'object',
      description: 'Intent of the text; {} before the first user message',
      properties: { name: { type: 'string', nullable: true }, confidence: { type: 'number' } },
    },
    why:
      'The spec requires {name, confidence}, but the empty latest_message has `intent: {}` (§5.5), ' +
      'trigger_intent stores `intent: {"name": …}` without confidence (§5.11), a core-only model ' +
      'parses to name null (§5.18), and Rasa EVENTS_SCHEMA requires neither key (§4). ' +
      '`intent_ranking` items keep the strict Intent schema.',
  },
  {
    at: `${SCHEMAS}/Entity/required`,
    mode: 'replace',
    spec: ['start', 'end', 'value', 'entity'],
    real: ['entity', 'value'],
    why:
      'Entities without offsets are real: trigger_intent object shorthand (§5.11) and `entities` ' +
      'events merged into latest_message (§7, §8); Rasa EVENTS_SCHEMA requires only entity+value (§4).',
  },
  {
    at: `${SCHEMAS}/Entity/properties/value`,
    mode: 'replace',
    spec: { type: 'string', description: 'Found value for entity' },
    real: { description: 'Found value for entity (any JSON value)' },
    why:
      'Entity values are any JSON (numbers, objects from extractors/trigger_intent); Rasa ' +
      'EVENTS_SCHEMA declares `value: {}` (§4), as does this spec for EntitiesAddedEvent.',
  },
  // ---- Events: Rasa Pro event types (Parley implements the Pro-edition EVENTS_SCHEMA) --------
  {
    at: `${SCHEMAS}/ProEvent`,
    mode: 'replace',
    spec: undefined,
    real: {
      allOf: [
        { $ref: '#/components/schemas/BasicEvent' },
        { type: 'object', properties: { event: { enum: PRO_EVENT_TYPES } } },
      ],
    },
    why:
      'The spec predates Rasa Pro. The Pro event types (§4, §7) are accepted by Parley (its events ' +
      'JSON schema is the Pro edition), so trackers may contain them; only their names are fixed.',
  },
  {
    at: `${SCHEMAS}/Event/anyOf/23`,
    mode: 'replace',
    spec: undefined,
    real: { $ref: '#/components/schemas/ProEvent' },
    why: 'Adds ProEvent (previous entry) as a 24th Event variant.',
  },
  // ---- Error body (§2) ----------------------------------------------------------------------
  {
    at: `${SCHEMAS}/Error/properties/help`,
    mode: 'merge',
    spec: { type: 'string' },
    real: { nullable: true },
    why: '`help` is null when the error has no help URL (§2).',
  },
  // ---- Domain (GET /domain) — Rasa 3 domain format ------------------------------------------
  {
    at: `${SCHEMAS}/Domain/properties/intents/items`,
    mode: 'replace',
    spec: { $ref: '#/components/schemas/IntentDescription' },
    real: { anyOf: [{ type: 'string' }, { $ref: '#/components/schemas/IntentDescription' }] },
    why:
      'Domain.as_dict() keeps intents as written in domain.yml: bare names (`- greet`) are strings, ' +
      'only intents with properties are {name: {...}} objects (Rasa 3 domain format, e.g. moodbot).',
  },
  {
    at: `${SCHEMAS}/SlotDescription/required`,
    mode: 'replace',
    spec: ['type', 'auto_fill'],
    real: ['type'],
    why: '`auto_fill` was removed in Rasa 3.0 (slots have `mappings` instead); only `type` is always set.',
  },
  {
    at: `${SCHEMAS}/SlotDescription/properties/initial_value`,
    mode: 'replace',
    spec: { type: 'string', nullable: true },
    real: { description: 'Initial slot value (any JSON: float/bool/list slots are not strings)' },
    why: 'Initial values follow the slot type: numbers for float, booleans for bool, lists for list slots.',
  },
  {
    at: `${SCHEMAS}/Domain/properties/responses/additionalProperties`,
    mode: 'replace',
    spec: { $ref: '#/components/schemas/TemplateDescription' },
    real: { type: 'array', items: { type: 'object' } },
    why:
      'Each response is a list of variants (`utter_greet: [{text: …}]`), and variants may have no ' +
      'text (image/buttons/custom). TemplateDescription is still used for request bodies.',
  },
];

interface Loaded {
  spec: Record<string, unknown>;
  ajv: Ajv;
  validators: Map<string, { pointer: string; validate: ValidateFunction }>;
}

let loaded: Loaded | undefined;

function load(): Loaded {
  if (loaded) return loaded;
  const spec = parse(readFileSync(RASA_OPENAPI_PATH, 'utf8')) as Record<string, unknown>;
  for (const override of OPENAPI_OVERRIDES) applyOverride(spec, override);
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // `format: binary` (TrainingResult) is an OpenAPI-only format: any string is fine.
  ajv.addFormat('binary', true);
  ajv.addSchema(spec, SPEC_ID);
  loaded = { spec, ajv, validators: new Map() };
  return loaded;
}

function splitPointer(pointer: string): string[] {
  if (!pointer.startsWith('/')) throw new Error(`not a JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function toPointer(segments: readonly string[]): string {
  return segments.map((s) => '/' + s.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Deep "contains": every key of `expected` is in `actual` with a containing value. */
function contains(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => contains(actual[i], item))
    );
  }
  if (isRecord(expected)) {
    return isRecord(actual) && Object.keys(expected).every((k) => contains(actual[k], expected[k]));
  }
  return actual === expected;
}

function applyOverride(spec: Record<string, unknown>, override: OpenApiOverride): void {
  const segments = splitPointer(override.at);
  const key = segments.pop() as string;
  let parent: unknown = spec;
  for (const segment of segments) {
    parent = isRecord(parent) ? parent[segment] : undefined;
  }
  if (!isRecord(parent)) throw new Error(`OpenAPI override ${override.at}: parent not found`);
  const current = parent[key];
  const matches =
    override.spec === undefined ? current === undefined : contains(current, override.spec);
  if (!matches) {
    throw new Error(
      `OpenAPI override ${override.at} no longer applies: expected the spec to say ` +
        `${JSON.stringify(override.spec)}, found ${JSON.stringify(current)}. Review OPENAPI_OVERRIDES.`,
    );
  }
  parent[key] =
    override.mode === 'merge'
      ? { ...(current as Record<string, unknown>), ...(override.real as Record<string, unknown>) }
      : structuredClone(override.real);
}

function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function label(method: string, pathTemplate: string, status: number, mediaType: string): string {
  return `${method.toUpperCase()} ${pathTemplate} → ${status} (${mediaType})`;
}

/** Finds the response schema's location (JSON pointer segments) in the patched spec. */
function locate(
  spec: Record<string, unknown>,
  method: string,
  pathTemplate: string,
  status: number,
  contentType: string,
): string[] {
  const mediaType = mediaTypeOf(contentType);
  const what = label(method, pathTemplate, status, mediaType);
  const paths = spec.paths as Record<string, unknown>;
  const item = paths[pathTemplate];
  if (!isRecord(item)) {
    throw new Error(
      `${what}: the Rasa OpenAPI spec has no path "${pathTemplate}". ` +
        `Known paths: ${Object.keys(paths).join(', ')}`,
    );
  }
  const verb = method.toLowerCase();
  const operation = item[verb];
  if (!isRecord(operation)) {
    throw new Error(`${what}: the spec documents no ${verb.toUpperCase()} on "${pathTemplate}"`);
  }
  const responses = operation.responses as Record<string, unknown>;
  let segments = ['paths', pathTemplate, verb, 'responses', String(status)];
  let response = responses[String(status)];
  if (!isRecord(response)) {
    throw new Error(
      `${what}: the spec documents no ${status} response (documented: ` +
        `${Object.keys(responses).join(', ')})`,
    );
  }
  if (typeof response.$ref === 'string') {
    const ref = response.$ref;
    if (!ref.startsWith('#/')) throw new Error(`${what}: unsupported response $ref ${ref}`);
    segments = splitPointer(ref.slice(1));
    response = segments.reduce<unknown>((node, s) => (isRecord(node) ? node[s] : undefined), spec);
    if (!isRecord(response)) throw new Error(`${what}: dangling response $ref ${ref}`);
  }
  const content = response.content;
  if (!isRecord(content)) throw new Error(`${what}: the spec defines no response body`);
  const media = content[mediaType];
  if (!isRecord(media)) {
    throw new Error(
      `${what}: the spec has no "${mediaType}" body (documented: ${Object.keys(content).join(', ')})`,
    );
  }
  if (!isRecord(media.schema)) {
    throw new Error(`${what}: the spec gives no schema for this body (only an example)`);
  }
  return [...segments, 'content', mediaType, 'schema'];
}

/**
 * The compiled ajv validator for one documented response (cached). Throws when the spec has no
 * schema for it. Mostly for openapi-validator self-tests; specs use expectMatchesOpenApi().
 */
export function openApiValidator(
  method: string,
  pathTemplate: string,
  status: number,
  contentType = 'application/json',
): { pointer: string; validate: ValidateFunction } {
  const { spec, ajv, validators } = load();
  const key = `${method.toLowerCase()} ${pathTemplate} ${status} ${mediaTypeOf(contentType)}`;
  let entry = validators.get(key);
  if (!entry) {
    const pointer = toPointer(locate(spec, method, pathTemplate, status, contentType));
    // ajv decodes fragments with decodeURIComponent and then unescapes ~1/~0, so encode each
    // segment (paths contain "{" and "}").
    const fragment = pointer
      .split('/')
      .map((segment) => encodeURIComponent(segment))
      .join('/');
    entry = { pointer, validate: ajv.compile({ $ref: `${SPEC_ID}#${fragment}` }) };
    validators.set(key, entry);
  }
  return entry;
}

/**
 * The (override-patched) response schema of one operation/status/content type, as written in the
 * spec (its `$ref`s are not expanded). Throws when the spec has no schema for it.
 */
export function openApiSchemaFor(
  method: string,
  pathTemplate: string,
  status: number,
  contentType = 'application/json',
): unknown {
  const { spec } = load();
  const segments = locate(spec, method, pathTemplate, status, contentType);
  const schema = segments.reduce<unknown>(
    (node, s) => (isRecord(node) ? node[s] : undefined),
    spec,
  );
  return structuredClone(schema);
}

/** Every (method, path, status, content type) for which the spec gives a response schema. */
export function openApiResponses(): Array<{
  method: string;
  pathTemplate: string;
  status: number;
  contentType: string;
}> {
  const { spec } = load();
  const found: ReturnType<typeof openApiResponses> = [];
  for (const [pathTemplate, item] of Object.entries(spec.paths as Record<string, unknown>)) {
    if (!isRecord(item)) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (!isRecord(operation) || !isRecord(operation.responses)) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        let resolved: unknown = response;
        if (isRecord(response) && typeof response.$ref === 'string') {
          resolved = splitPointer(response.$ref.slice(1)).reduce<unknown>(
            (node, s) => (isRecord(node) ? node[s] : undefined),
            spec,
          );
        }
        if (!isRecord(resolved) || !isRecord(resolved.content)) continue;
        for (const [contentType, media] of Object.entries(resolved.content)) {
          if (isRecord(media) && isRecord(media.schema)) {
            found.push({ method, pathTemplate, status: Number(status), contentType });
          }
        }
      }
    }
  }
  return found;
}

function formatError(error: ErrorObject): string {
  const where = error.instancePath === '' ? '(body)' : error.instancePath;
  const params =
    error.keyword === 'enum' || error.keyword === 'additionalProperties'
      ? ` ${JSON.stringify(error.params)}`
      : '';
  return `  - ${where} ${error.message ?? error.keyword}${params}  [${error.schemaPath}]`;
}

/**
 * An `anyOf` over many variants (Event has 24) fails every branch's `enum` on the same value; merge
 * those into one error listing all allowed values so the real cause is not buried.
 */
function mergeEnumErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const merged: ErrorObject[] = [];
  const enums = new Map<string, { error: ErrorObject; allowed: unknown[] }>();
  for (const error of errors) {
    if (error.keyword !== 'enum') {
      merged.push(error);
      continue;
    }
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    const seen = enums.get(error.instancePath);
    if (seen) {
      seen.allowed.push(...allowed);
      continue;
    }
    const entry = { error: { ...error }, allowed: [...allowed] };
    enums.set(error.instancePath, entry);
    merged.push(entry.error);
  }
  for (const { error, allowed } of enums.values()) error.params = { allowedValues: allowed };
  return merged;
}

function preview(body: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(body) ?? String(body);
  } catch {
    text = String(body);
  }
  return text.length > MAX_BODY_CHARS
    ? `${text.slice(0, MAX_BODY_CHARS)}… (${text.length} chars)`
    : text;
}

/**
 * Throws a readable error (listing ajv's errors) when `body` does not match the response schema
 * the Rasa OpenAPI spec gives for `method pathTemplate → status` with `contentType`, and also when
 * the spec has no schema for that response at all. `pathTemplate` is the spec's path key, e.g.
 * `/conversations/{conversation_id}/tracker`.
 */
export function expectMatchesOpenApi(
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
  contentType = 'application/json',
): void {
  const { pointer, validate } = openApiValidator(method, pathTemplate, status, contentType);
  if (validate(body)) return;
  const errors = mergeEnumErrors(validate.errors ?? []);
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map(formatError);
  if (errors.length > MAX_LISTED_ERRORS) {
    listed.push(`  … and ${errors.length - MAX_LISTED_ERRORS} more`);
  }
  throw new Error(
    `Response of ${label(method, pathTemplate, status, mediaTypeOf(contentType))} does not ` +
      `match the Rasa OpenAPI schema at #${pointer} (${errors.length} error(s)):\n` +
      `${listed.join('\n')}\nBody: ${preview(body)}`,
  );
}
