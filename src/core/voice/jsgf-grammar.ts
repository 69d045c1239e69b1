/**
 * A JSGF grammar for the offline recogniser built from what callers are expected to say: NLU
 * examples, button titles, digits, yes/no. Words missing from the pronunciation dictionary are
 * dropped with their phrase (the recogniser refuses unknown words).
 */
const DIGITS = [
  'zero',
  'oh',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
];
const BASICS = ['yes', 'no', 'okay', 'stop', 'help', 'goodbye', 'bye'];

/** Lower-case words of a phrase: entity annotations `[text](entity)` reduced to `text`. */
export function phraseWords(text: string): string[] {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\{[^}]*\}/g, '$1')
    .toLowerCase()
    .replace(/[^a-z0-9'\s]/g, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w.length > 0);
}

/**
 * `digits`: add a loop of spoken digits. `auto` (the default) adds it only when the phrases
 * speak of numbers (a digit word or a numeral in an example): for a bot that never asks for one,
 * the loop only catches noise and mumbling ("oh", "eight two").
 */
export function buildJsgf(
  phrases: readonly string[],
  hasWord: (word: string) => boolean,
  digitsOption: boolean | 'auto' = 'auto',
): string | null {
  const withDigits =
    digitsOption === 'auto'
      ? phrases.some((p) => /\d/.test(p) || phraseWords(p).some((w) => DIGITS.includes(w)))
      : digitsOption;
  const seen = new Set<string>();
  for (const phrase of [...phrases, ...BASICS]) {
    const words = phraseWords(phrase);
    if (words.length === 0 || !words.every(hasWord)) continue;
    seen.add(words.join(' '));
  }
  if (seen.size === 0) return null;
  const digits = withDigits ? DIGITS.filter(hasWord) : [];
  const lines = ['#JSGF V1.0;', 'grammar parley;', `<phrase> = ${[...seen].sort().join(' | ')};`];
  if (digits.length > 0) {
    lines.push(`<digit> = ${digits.join(' | ')};`);
    lines.push('public <utterance> = /10/ <phrase> | /1/ <digit>+;');
  } else {
    lines.push('public <utterance> = <phrase>;');
  }
  return `${lines.join('\n')}\n`;
}
