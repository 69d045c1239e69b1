/**
 * Python `re` patterns (as written in Rasa regex blocks and configs) compiled to JS RegExps.
 * Covers the syntax that differs: `(?P<name>…)`, `(?P=name)`, `\Z`, `\A`, leading inline flags.
 */

/** Python's Unicode `\w` (letters, marks, digits, connector punctuation). */
export const WORD_CHAR = String.raw`[\p{L}\p{M}\p{Nd}\p{Pc}]`;
const WORD_CHAR_RE = new RegExp(`^${WORD_CHAR}$`, 'u');

export function isWordChar(ch: string): boolean {
  return WORD_CHAR_RE.test(ch);
}

function translate(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([aiLmsux]+)\)/.exec(source);
  if (inline) {
    source = source.slice(inline[0].length);
    const f = inline[1] ?? '';
    if (f.includes('i')) flags += 'i';
    if (f.includes('m')) flags += 'm';
    if (f.includes('s')) flags += 's';
  }
  source = source
    .replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>')
    .replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, '\\k<$1>')
    .replace(/\\Z/g, '$')
    .replace(/\\A/g, '^');
  return { source, flags };
}

const W_INNER = String.raw`\p{L}\p{M}\p{Nd}\p{Pc}`;

/** Rewrites `\w`, `\W`, `\d`, `\b`, `\B` to their Unicode (Python 3 str) meaning. */
function unicodeClasses(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] ?? '';
    if (ch === '\\') {
      const next = source[i + 1] ?? '';
      i++;
      if (next === 'w') out += inClass ? W_INNER : `[${W_INNER}]`;
      else if (next === 'W' && !inClass) out += `[^${W_INNER}]`;
      else if (next === 'd') out += String.raw`\p{Nd}`;
      else if (next === 'D' && !inClass) out += String.raw`\P{Nd}`;
      else if (next === 'b' && !inClass) {
        out += `(?:(?<=[${W_INNER}])(?![${W_INNER}])|(?<![${W_INNER}])(?=[${W_INNER}]))`;
      } else if (next === 'B' && !inClass) {
        out += `(?:(?<=[${W_INNER}])(?=[${W_INNER}])|(?<![${W_INNER}])(?![${W_INNER}]))`;
      } else out += `\\${next}`;
      continue;
    }
    if (ch === '[' && !inClass) inClass = true;
    else if (ch === ']' && inClass) inClass = false;
    out += ch;
  }
  return out;
}

/** Compiles a Python pattern; throws SyntaxError when JS cannot express it. */
export function compilePythonRegex(pattern: string, caseSensitive: boolean): RegExp {
  const { source, flags } = translate(pattern);
  let all = `g${flags}`;
  if (!caseSensitive && !all.includes('i')) all += 'i';
  try {
    // Unicode mode first, with Python 3's Unicode-aware classes.
    return new RegExp(unicodeClasses(source), `${all}u`);
  } catch {
    return new RegExp(source, all);
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * Python `\b` next to a character: a boundary requires the neighbour to be of the other
 * word/non-word class, so it depends on the element's first/last character.
 */
function boundaryBefore(first: string): string {
  return isWordChar(first) ? `(?<!${WORD_CHAR})` : `(?<=${WORD_CHAR})`;
}
function boundaryAfter(last: string): string {
  return isWordChar(last) ? `(?!${WORD_CHAR})` : `(?=${WORD_CHAR})`;
}

/** Rasa's lookup-table pattern: `(\belem1\b|\belem2\b|…)` or `(elem1|elem2|…)`. */
export function lookupTablePattern(
  elements: readonly string[],
  useWordBoundaries: boolean,
): string {
  const parts = elements
    .filter((e) => e.length > 0)
    .map((e) => {
      const escaped = escapeRegex(e);
      if (!useWordBoundaries) return escaped;
      const chars = [...e];
      return `${boundaryBefore(chars[0] ?? '')}${escaped}${boundaryAfter(chars[chars.length - 1] ?? '')}`;
    });
  return `(${parts.join('|')})`;
}

/** Compiles a lookup pattern produced by lookupTablePattern (already JS syntax). */
export function compileLookupPattern(pattern: string, caseSensitive: boolean): RegExp {
  return new RegExp(pattern, caseSensitive ? 'gu' : 'giu');
}

/** All [start, end) spans of a global RegExp over the text (empty matches skipped). */
export function matchSpans(re: RegExp, text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  re.lastIndex = 0;
  for (const m of text.matchAll(re)) {
    if (m[0].length > 0) spans.push([m.index, m.index + m[0].length]);
  }
  return spans;
}
