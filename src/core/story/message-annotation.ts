import { DialogueError } from 'src/core/errors/dialogue-error';
import { type JsonObject } from 'src/core/events/event-base';
import { isTruthy } from 'src/core/events/json-values';
import { pythonJsonDumps } from 'src/core/story/python-json';

/** Prefix of a message that names its intent directly (`/greet{"name": "x"}`). */
const INTENT_MESSAGE_PREFIX = '/';

/** Rasa's entity annotation syntax inside a training example (entities_parser `ENTITY_REGEX`). */
const ANNOTATION =
  /\[(?<text>[^\]]+?)\](?:\((?<entity>[^:)]+?)(?::(?<value>[^)]+))?\)|\{(?<dict>[^}]+?)\}|\[(?<list>.*?)\])/g;

/** Python `str()` of a value in an f-string (`None`, `True`, …). */
function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  return typeof value === 'string' ? value : pythonJsonDumps(value);
}

function entityAttributes(entityText: string, entity: JsonObject, shortAllowed: boolean): string {
  const type = entity.entity ?? null;
  let value: unknown = entity.value ?? null;
  const role = entity.role ?? null;
  const group = entity.group ?? null;
  if (isTruthy(value) && value === entityText) value = null;
  if (shortAllowed && value === null && role === null && group === null) {
    return `(${pyStr(type)})`;
  }
  const dict: JsonObject = {};
  for (const [k, v] of [
    ['entity', type],
    ['role', role],
    ['group', group],
    ['value', value],
  ] as const) {
    if (v !== null) dict[k] = v;
  }
  return pythonJsonDumps(dict);
}

/**
 * Rasa's `format_message`: the text with its entities annotated inline, e.g.
 * `I live in [Berlin](city)` or `[Berlin]{"entity": "city", "role": "destination"}`. Existing
 * annotation markup in the text is removed first; texts starting with `/` are kept as they are.
 * Entities without `start`/`end` offsets are not annotated. Offsets count code points.
 */
export function formatMessage(text: string, entities: readonly JsonObject[]): string {
  const plain = text.replace(ANNOTATION, (_match, inner: string) => inner);
  if (plain.startsWith(INTENT_MESSAGE_PREFIX)) return plain;
  const chars = Array.from(plain);
  const slice = (from: number, to?: number): string => chars.slice(from, to).join('');

  const byStart = new Map<number, JsonObject[]>();
  for (const entity of entities) {
    if (typeof entity.start !== 'number' || typeof entity.end !== 'number') continue;
    const group = byStart.get(entity.start) ?? [];
    group.push(entity);
    byStart.set(entity.start, group);
  }
  for (const group of byStart.values()) {
    const end = group[0]?.end;
    for (const entity of group.slice(1)) {
      if (entity.end !== end) {
        throw new DialogueError(
          'TRACKER.CONVERSATION_ERROR',
          `Entities '${pythonJsonDumps(entity)}' and '${pythonJsonDumps(group[0])}' have identical start but different end positions`,
        );
      }
    }
  }

  let out = '';
  let pos = 0;
  for (const start of [...byStart.keys()].sort((a, b) => a - b)) {
    const group = byStart.get(start) as JsonObject[];
    const first = group[0] as JsonObject;
    const end = first.end as number;
    const entityText = slice(start, end);
    out += slice(pos, start);
    if (group.length === 1) {
      out += `[${entityText}]${entityAttributes(entityText, first, true)}`;
    } else {
      out += `[${entityText}][${group.map((e) => entityAttributes(entityText, e, false)).join(', ')}]`;
    }
    pos = end;
  }
  return out + slice(pos);
}
