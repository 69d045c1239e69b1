import { type NluComponent } from 'src/core/nlu/component';
import { type NluMessage, type Token } from 'src/core/nlu/message';
import { compilePythonRegex } from 'src/core/nlu/python-regex';

/** Python `regex`-module `\w` (Alphabetic, marks, decimal digits, connectors, joiners). */
const W = String.raw`\p{Alpha}\p{M}\p{Nd}\p{Pc}\u200c-\u200d`;

/**
 * Rasa's WhitespaceTokenizer substitution: non-word runs are replaced by a space when they
 * (1) precede whitespace or the end, (2) follow whitespace or the start and precede a non-digit,
 * (3) sit between two non-digits and are not URL/e-mail characters.
 */
const CLEANUP = new RegExp(
  [
    String.raw`[^${W}#@&]+(?=\s|$)`,
    String.raw`(?:\s|^)[^${W}#@&]+(?=[^0-9\s])`,
    String.raw`(?<=[^0-9\s])[^${W}._~:/?#\[\]()@!$&*+,;=-]+(?=[^0-9\s])`,
  ].join('|'),
  'gu',
);

/**
 * Every match of CLEANUP lies inside one run of characters that are not word characters, `#`,
 * `@` or `&`, and the engine backtracks over such a run once per start position: quadratic in
 * the run's length (a 10,000-character run of dots took seconds). Runs longer than this are
 * blanked first, which keeps tokenizing linear in the text; text with a shorter run (any text a
 * person writes) is tokenized exactly as before.
 */
const MAX_NON_WORD_RUN = 64;
const LONG_NON_WORD_RUN = new RegExp(String.raw`[^${W}#@&]{${MAX_NON_WORD_RUN + 1},}`, 'gu');

/** Rasa's emoji ranges; a word made only of these is dropped. */
const EMOJI =
  /^[\u{1F600}-\u{1F64F}\u{1F300}-\u{1F5FF}\u{1F680}-\u{1F6FF}\u{1F1E0}-\u{1F1FF}\u{2702}-\u{27B0}\u{24C2}-\u{1F251}\u{200C}-\u{200D}]+$/u;

export interface WhitespaceTokenizerConfig {
  readonly intent_tokenization_flag: boolean;
  readonly intent_split_symbol: string;
  readonly token_pattern: string | null;
  readonly prefix_separator_symbol: string | null;
}

export const WHITESPACE_TOKENIZER_DEFAULTS: WhitespaceTokenizerConfig = {
  intent_tokenization_flag: false,
  intent_split_symbol: '_',
  token_pattern: null,
  prefix_separator_symbol: null,
};

function wordsToTokens(words: readonly string[], text: string, base = 0): Token[] {
  const tokens: Token[] = [];
  let running = 0;
  for (const word of words) {
    const offset = text.indexOf(word, running);
    const start = offset < 0 ? running : offset;
    running = start + word.length;
    tokens.push({ text: word, start: base + start, end: base + start + word.length });
  }
  return tokens;
}

/** Tokenizes like Rasa 3.x WhitespaceTokenizer (offsets are UTF-16 indices). */
export function whitespaceTokenize(text: string, tokenPattern: RegExp | null = null): Token[] {
  const bounded =
    text.length > MAX_NON_WORD_RUN
      ? text.replace(LONG_NON_WORD_RUN, (run) => ' '.repeat(run.length))
      : text;
  let words = bounded
    .replace(CLEANUP, ' ')
    .split(/\s+/u)
    .filter((w) => w.length > 0 && !EMOJI.test(w));
  if (words.length === 0) words = [text];
  const tokens = wordsToTokens(words, text);
  if (!tokenPattern) return tokens;
  const out: Token[] = [];
  for (const token of tokens) {
    tokenPattern.lastIndex = 0;
    const parts = [...token.text.matchAll(tokenPattern)].map((m) => m[0]).filter((p) => p);
    if (parts.length === 0) out.push(token);
    else out.push(...wordsToTokens(parts, token.text, token.start));
  }
  return out;
}

export class WhitespaceTokenizer implements NluComponent {
  static readonly componentName = 'WhitespaceTokenizer';
  readonly name = WhitespaceTokenizer.componentName;
  private readonly pattern: RegExp | null;

  constructor(readonly config: WhitespaceTokenizerConfig) {
    this.pattern = config.token_pattern ? compilePythonRegex(config.token_pattern, true) : null;
  }

  process(message: NluMessage): void {
    message.tokens = message.text.length ? whitespaceTokenize(message.text, this.pattern) : [];
  }

  toJSON(): unknown {
    return null;
  }
}
