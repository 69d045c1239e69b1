import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import {
  EVENT_COMMON_SCHEMA,
  EVENT_TYPE_SCHEMAS,
  EVENTS_SCHEMA,
} from 'src/core/events/events-json-schema';
import { isJsonObject } from 'src/core/events/json-values';

/** Start of the 400 message Rasa sends for an invalid events body. */
export const EVENTS_FORMAT_ERROR_PREFIX =
  'Failed to validate the events format. For more information about the format visit the docs. Error: ';

export type ValidateEventsResult =
  | { readonly ok: true; readonly events: Record<string, unknown>[] }
  | { readonly ok: false; readonly message: string };

// Compiled on first use, each once (compiling them all costs a start-up a few hundred ms, and
// the per-type ones serve only error messages). `strict: false`: Rasa's schema uses
// `properties` without `type`.
let ajv: Ajv | null = null;
const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: () => object): ValidateFunction {
  let validate = compiled.get(key);
  if (validate === undefined) {
    ajv ??= new Ajv({ strict: false, allErrors: false, verbose: true });
    validate = ajv.compile(schema());
    compiled.set(key, validate);
  }
  return validate;
}
const validateAll = (): ValidateFunction => validator(' all', () => EVENTS_SCHEMA);
const validateCommon = (): ValidateFunction => validator(' common', () => EVENT_COMMON_SCHEMA);
const validateByType = (name: string): ValidateFunction | undefined => {
  const schema = Object.prototype.hasOwnProperty.call(EVENT_TYPE_SCHEMAS, name)
    ? (EVENT_TYPE_SCHEMAS as Record<string, object>)[name]
    : undefined;
  return schema === undefined
    ? undefined
    : validator(name, () => ({ ...EVENT_COMMON_SCHEMA, allOf: [schema] }));
};

/**
 * Rasa's `validate_events_in_request_body`: a body that is not a list is wrapped in one (an absent
 * body becomes `[null]`), then checked against `EVENTS_SCHEMA`. On failure the message is Rasa's,
 * ending with a short description of the first problem naming the event index and field.
 */
export function validateEventsPayload(body: unknown): ValidateEventsResult {
  const events: unknown[] = Array.isArray(body) ? body : [body === undefined ? null : body];
  if (validateAll()(events)) {
    return { ok: true, events: events as Record<string, unknown>[] };
  }
  return { ok: false, message: EVENTS_FORMAT_ERROR_PREFIX + describeFirstProblem(events) };
}

function describeFirstProblem(events: readonly unknown[]): string {
  for (const [index, event] of events.entries()) {
    const problem = describeEventProblem(event);
    if (problem !== null) return `events[${index}]${problem}`;
  }
  // Not reached: every event passed on its own. Fall back to the whole-list errors.
  const first = validateAll().errors?.[0];
  return first ? `events${formatError(first, '')}` : 'invalid events';
}

/** `null` when the event is valid, else `<.field path>: <problem>`. */
function describeEventProblem(event: unknown): string | null {
  const common = validateCommon();
  if (!common(event)) {
    const first = common.errors?.[0];
    return first ? formatError(first, '') : ': invalid event';
  }
  const name = (event as { event: string }).event;
  const byType = validateByType(name);
  if (!byType) {
    return `.event: ${repr(name)} is not a valid event type`;
  }
  if (byType(event)) return null;
  const first = byType.errors?.[0];
  return first ? formatError(first, '') : ': invalid event';
}

function formatError(error: ErrorObject, prefix: string): string {
  const path = prefix + pointerToPath(error.instancePath);
  switch (error.keyword) {
    case 'required': {
      const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
      return `${path}.${missing}: '${missing}' is a required property`;
    }
    case 'type': {
      const types = String((error.params as { type?: unknown }).type)
        .split(',')
        .map((t) => `'${t}'`)
        .join(', ');
      return `${path}: ${repr(error.data)} is not of type ${types}`;
    }
    case 'const':
      return `${path}: ${repr((error.params as { allowedValue?: unknown }).allowedValue)} was expected`;
    case 'oneOf':
      return `${path}: ${repr(error.data)} is not valid under exactly one of the given schemas`;
    default:
      return `${path}: ${error.message ?? 'is invalid'}`;
  }
}

/** `/parse_data/entities/0/start` → `.parse_data.entities[0].start`. */
function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .split('/')
    .slice(1)
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('');
}

function repr(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = `'${value}'`;
  else if (value === undefined) text = 'undefined';
  else text = JSON.stringify(value);
  if (isJsonObject(value) || Array.isArray(value)) {
    text = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
