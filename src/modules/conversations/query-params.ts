/** Rasa's bool query rule: only the string "true" (any case) is true; absent → the default. */
export function boolParam(value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  const v: unknown = Array.isArray(value) ? (value as unknown[])[value.length - 1] : value;
  return String(v).toLowerCase() === 'true';
}

/** Rasa's float query rule (`until`): unparsable values are ignored (treated as absent). */
export function floatParam(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const v: unknown = Array.isArray(value) ? (value as unknown[])[value.length - 1] : value;
  const n = Number(String(v).trim());
  return Number.isFinite(n) ? n : null;
}

/** `include_events`: ALL, APPLIED, AFTER_RESTART (default) or NONE, any case; else 400. */
export function verbosityParam(value: unknown): EventVerbosity {
  const raw =
    value === undefined
      ? undefined
      : String(Array.isArray(value) ? value[value.length - 1] : value);
  const parsed = parseEventVerbosity(raw);
  if (parsed === null) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      "Invalid parameter value for 'include_events'. Should be one of NONE, APPLIED, AFTER_RESTART, ALL",
      { parameter: 'include_events', in: 'query' },
    );
  }
  return parsed;
}
import { DialogueError, EventVerbosity, parseEventVerbosity } from 'src/core';

/** `format` of `GET /conversations/{id}/test_case`: `yaml` (default) or `json`, any case; else 400. */
export function testCaseFormatParam(value: unknown): 'yaml' | 'json' {
  if (value === undefined) return 'yaml';
  const v = String(Array.isArray(value) ? (value as unknown[])[value.length - 1] : value);
  const format = v.toLowerCase();
  if (format === 'yaml' || format === 'json') return format;
  throw new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    "Invalid parameter value for 'format'. Should be one of yaml, json",
    { parameter: 'format', in: 'query' },
  );
}
