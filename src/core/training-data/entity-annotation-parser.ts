import { type EntityAnnotation } from 'src/core/training-data/nlu-training-data';

/**
 * Rasa 3.x entity annotation syntax (entities_parser.py):
 * `[text](entity)`, `[text](entity:value)` (legacy synonym shorthand) and
 * `[text]{"entity": "e", "role": "r", "group": "g", "value": "v"}`.
 */
const ANNOTATION =
  /\[(?<text>[^\]]+?)\](?:\((?<entity>[^:)]+?)(?::(?<value>[^)]+))?\)|\{(?<dict>[^}]+?)\})/g;

/** Leftovers that look like an annotation the regex above did not accept. */
const MALFORMED = /\[[^\]]*\](?:\([^)]*(?:\)|$)|\{[^}]*(?:\}|$))/;

const DICT_KEYS = new Set(['entity', 'role', 'group', 'value']);

export interface ParsedAnnotatedText {
  readonly text: string;
  readonly entities: EntityAnnotation[];
}

/** A problem in an annotation; the reader adds file and line. */
export class EntityAnnotationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EntityAnnotationError';
  }
}

function parseEntityDict(raw: string): {
  entity: string;
  role?: string;
  group?: string;
  value?: string;
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(`{${raw}}`);
  } catch {
    throw new EntityAnnotationError(`entity annotation {${raw}} is not valid JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new EntityAnnotationError(`entity annotation {${raw}} must be a JSON object`);
  }
  const record = parsed as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!DICT_KEYS.has(key)) {
      throw new EntityAnnotationError(
        `entity annotation {${raw}} has unknown key '${key}' (allowed: entity, role, group, value)`,
      );
    }
  }
  const str = (key: string): string | undefined => {
    const v = record[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.length === 0) {
      throw new EntityAnnotationError(
        `entity annotation {${raw}}: '${key}' must be a non-empty string`,
      );
    }
    return v;
  };
  const entity = str('entity');
  if (entity === undefined) {
    throw new EntityAnnotationError(`entity annotation {${raw}} lacks the 'entity' key`);
  }
  const role = str('role');
  const group = str('group');
  const value = str('value');
  return {
    entity,
    ...(role === undefined ? {} : { role }),
    ...(group === undefined ? {} : { group }),
    ...(value === undefined ? {} : { value }),
  };
}

/**
 * Strips annotations from an example and returns the plain text with entity offsets into it.
 * Throws EntityAnnotationError for invalid JSON dicts and for bracket constructs that look like
 * an annotation but do not parse (e.g. `[x](` or `[x]()`).
 */
export function parseAnnotatedText(annotated: string): ParsedAnnotatedText {
  const entities: EntityAnnotation[] = [];
  let plain = '';
  let last = 0;
  for (const match of annotated.matchAll(ANNOTATION)) {
    const groups = match.groups ?? {};
    const surface = groups['text'] ?? '';
    const before = annotated.slice(last, match.index);
    plain += before;
    const start = plain.length;
    plain += surface;
    last = match.index + match[0].length;
    let entity: EntityAnnotation;
    if (groups['dict'] !== undefined) {
      const dict = parseEntityDict(groups['dict']);
      entity = {
        entity: dict.entity,
        start,
        end: start + surface.length,
        value: dict.value ?? surface,
        ...(dict.role === undefined ? {} : { role: dict.role }),
        ...(dict.group === undefined ? {} : { group: dict.group }),
      };
    } else {
      const name = (groups['entity'] ?? '').trim();
      if (!name) {
        throw new EntityAnnotationError(`entity annotation [${surface}] has no entity name`);
      }
      entity = {
        entity: name,
        start,
        end: start + surface.length,
        value: groups['value'] ?? surface,
      };
    }
    entities.push(entity);
  }
  plain += annotated.slice(last);
  const leftover = MALFORMED.exec(annotated.replace(ANNOTATION, (m) => ' '.repeat(m.length)));
  if (leftover) {
    throw new EntityAnnotationError(
      `malformed entity annotation '${leftover[0]}' (expected [text](entity), [text](entity:value) or [text]{"entity": ...})`,
    );
  }
  return { text: plain, entities };
}
