import { DialogueError } from 'src/core/errors/dialogue-error';

/** Default of `PARLEY_MAX_TEXT_LENGTH`: generous for chat and for a long voice transcript. */
export const DEFAULT_MAX_TEXT_LENGTH = 10_000;

/**
 * Returns `text` when it is at most `max` characters (UTF-16 code units) long, else throws a
 * 400 naming the limit. Every route and channel that takes a user's text runs it through this
 * before any NLU, so parsing time and the stored event stay bounded.
 */
export function requireUserText(
  text: string,
  max: number,
  parameter = 'text',
  where = 'body',
): string {
  if (text.length <= max) return text;
  throw new DialogueError(
    'REQUEST.INVALID_PARAMETER',
    `The "${parameter}" is ${text.length} characters long; the limit is ${max} (PARLEY_MAX_TEXT_LENGTH).`,
    { parameter, in: where, rule: 'max_text_length', max_length: max },
  );
}

/** Applies {@link requireUserText} to the `text` of every `user` event of a posted event list. */
export function requireUserEventTexts(
  events: readonly Record<string, unknown>[],
  max: number,
): void {
  for (const event of events) {
    if (event.event === 'user' && typeof event.text === 'string') {
      requireUserText(event.text, max, 'text', 'body');
    }
  }
}
