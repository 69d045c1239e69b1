import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';

/** Emoji (pictographs, their modifiers, joiners and variation selectors) a voice cannot say. */
const EMOJI =
  /\p{Extended_Pictographic}|\p{Emoji_Modifier}|[\u{1F1E6}-\u{1F1FF}]|\u200d|\ufe0f|\u20e3/gu;

/** Rasa's remove_emojis: the text without emoji. */
export function removeEmojis(text: string): string {
  return text.replace(EMOJI, '');
}

/**
 * Rasa's `send_text_with_buttons_concise` for voice: the text, ended with a full stop unless it
 * ends in `.`, `!`, `?` or `:`, then the buttons' titles joined by `, `
 * (`Hi there! How is your day going? good, not so good`).
 */
export function conciseButtons(text: string | null, buttons: readonly unknown[]): string {
  let out = text ?? '';
  const last = out.trim().slice(-1);
  if (out.trim() !== '' && !['.', '!', '?', ':'].includes(last)) out += '.';
  if (out !== '') out += ' ';
  return out + buttons.map((b) => pythonStr(isJsonObject(b) ? (b.title ?? '') : '')).join(', ');
}
