import { DialogueError } from 'src/core/errors/dialogue-error';

/**
 * The rules of a conversation id (= a channel's sender id), the same on every REST route and
 * every channel:
 *
 * - 1 to {@link MAX_CONVERSATION_ID_LENGTH} characters (UTF-16 code units), the width of Rasa's
 *   SQL tracker store column (`sender_id VARCHAR(255)`); this also keeps every id far below
 *   PostgreSQL's btree row limit (about 2.7 kB) of the event log's key;
 * - no control characters (U+0000–U+001F, U+007F–U+009F): NUL cannot be stored in PostgreSQL
 *   text at all, the others only garble logs and URLs;
 * - well-formed UTF-16 (no lone surrogate), as it is stored as UTF-8.
 *
 * Rasa's `RestInput` takes any string; Parley refuses an id it could not store with a 400
 * instead of answering 200 for a turn that is then lost.
 */
export const MAX_CONVERSATION_ID_LENGTH = 255;

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The rule an id breaks (`length`, `control`, `unicode`), or null for a valid id. */
export function conversationIdProblem(
  id: string,
): { rule: 'length' | 'control' | 'unicode'; message: string } | null {
  if (id.length === 0 || id.length > MAX_CONVERSATION_ID_LENGTH) {
    return {
      rule: 'length',
      message: `must be 1 to ${MAX_CONVERSATION_ID_LENGTH} characters long (got ${id.length})`,
    };
  }
  if (CONTROL.test(id)) {
    return { rule: 'control', message: 'must not contain NUL or other control characters' };
  }
  if (LONE_SURROGATE.test(id)) {
    return { rule: 'unicode', message: 'must be valid Unicode (it holds a lone surrogate)' };
  }
  return null;
}

/**
 * Returns `id` when it follows the rules, else throws a 400 naming the rule. `parameter` and
 * `where` name the field in the failure body's details (`sender` in `body`, …).
 */
export function requireConversationId(
  id: string,
  parameter = 'conversation_id',
  where = 'path',
): string {
  const problem = conversationIdProblem(id);
  if (problem === null) return id;
  throw new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    `The ${parameter === 'conversation_id' ? 'conversation id' : `"${parameter}"`} ${problem.message}.`,
    { parameter, in: where, rule: problem.rule, max_length: MAX_CONVERSATION_ID_LENGTH },
  );
}
