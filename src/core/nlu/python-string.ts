/** Python `str` predicates used by Rasa's lexical features, on Unicode general categories. */

const UPPER = /[\p{Lu}]/u;
const LOWER = /[\p{Ll}]/u;
const TITLE = /[\p{Lt}]/u;
const CASED = /[\p{Lu}\p{Ll}\p{Lt}]/u;
const DIGITS = /^[\p{Nd}\u00B2\u00B3\u00B9\u2070-\u2079\u2080-\u2089\u2460-\u2468]+$/u;

/** `str.islower()`: at least one cased character and no upper/title-case one. */
export function pyIsLower(s: string): boolean {
  return LOWER.test(s) && !UPPER.test(s) && !TITLE.test(s);
}

/** `str.isupper()`: at least one cased character and no lower/title-case one. */
export function pyIsUpper(s: string): boolean {
  return (UPPER.test(s) || TITLE.test(s)) && !LOWER.test(s) && !TITLE.test(s);
}

/** `str.istitle()`: upper/title-case only after uncased, lower-case only after cased chars. */
export function pyIsTitle(s: string): boolean {
  let previousCased = false;
  let sawCased = false;
  for (const ch of s) {
    if (UPPER.test(ch) || TITLE.test(ch)) {
      if (previousCased) return false;
      previousCased = true;
      sawCased = true;
    } else if (LOWER.test(ch)) {
      if (!previousCased) return false;
      previousCased = true;
      sawCased = true;
    } else {
      previousCased = CASED.test(ch);
    }
  }
  return sawCased;
}

/** `str.isdigit()`: non-empty and only digit characters ("1.5" and "-1" are not). */
export function pyIsDigit(s: string): boolean {
  return DIGITS.test(s);
}

/** Python `str(True)` / `str(False)`. */
export function pyBool(b: boolean): string {
  return b ? 'True' : 'False';
}
