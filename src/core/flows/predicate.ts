import {
  isPlainObject,
  pyCompare,
  pyEquals,
  PythonTypeError,
  pyTruthy,
} from 'src/core/flows/python-values';

/**
 * Flow conditions: a predicate language compatible with pypred, which Rasa Pro evaluates for
 * `next[].if`, flow guards and collect rejections. The caller renders Jinja first; this module
 * parses and evaluates the result against `{context, slots}`.
 *
 * Faithful to pypred where it is surprising:
 * - `and` and `or` share one precedence level and associate to the right
 *   (`a and b or c` is `a and (b or c)`); `not` binds tighter than both.
 * - An unquoted token is an identifier looked up in the document (whole key, then dotted path);
 *   when absent it is Undefined, never a string. Quoted tokens are strings.
 * - Undefined equals Undefined and `empty`; `empty` equals anything of length zero, not null;
 *   ordering comparisons with Undefined or `empty` are false.
 * - Any evaluation error makes the whole condition false.
 */

/** A predicate that does not parse (or fails pypred's checks on `contains` / `matches`). */
export class PredicateSyntaxError extends Error {
  constructor(
    message: string,
    readonly predicate: string,
  ) {
    super(message);
    this.name = 'PredicateSyntaxError';
  }
}

export type PredicateAst =
  | {
      readonly kind: 'logical';
      readonly op: 'and' | 'or';
      readonly left: PredicateAst;
      readonly right: PredicateAst;
    }
  | { readonly kind: 'not'; readonly operand: PredicateAst }
  | {
      readonly kind: 'compare';
      /** `is` is `=`, `==` is `=`, `is not` is `!=`. */
      readonly op: '=' | '!=' | '>' | '>=' | '<' | '<=';
      readonly left: PredicateAst;
      readonly right: PredicateAst;
    }
  | { readonly kind: 'contains'; readonly left: PredicateAst; readonly right: PredicateAst }
  | { readonly kind: 'matches'; readonly left: PredicateAst; readonly regex: RegExp }
  /** A quoted string (`quoted`) or an identifier; `text` is without quotes. */
  | { readonly kind: 'literal'; readonly text: string; readonly quoted: boolean }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'constant'; readonly value: boolean | null }
  | { readonly kind: 'undefined' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'set'; readonly items: readonly PredicateAst[] };

/** Longest predicate accepted (characters). */
export const MAX_PREDICATE_LENGTH = 4000;
/** Deepest nesting accepted (parentheses, `not`, sets and `and`/`or` chains). */
export const MAX_PREDICATE_DEPTH = 100;
/** Longest string `matches` runs a regex on; longer subjects do not match. */
export const MAX_MATCH_SUBJECT_LENGTH = 2000;

// ---------------------------------------------------------------------------------------------
// Lexer (pypred's token rules: numbers before words, longer operators first, `#` comments)

type TokenType =
  | 'AND'
  | 'OR'
  | 'NOT'
  | 'IS'
  | 'CONTAINS'
  | 'MATCHES'
  | 'TRUE'
  | 'FALSE'
  | 'UNDEFINED'
  | 'NULL'
  | 'EMPTY'
  | 'NUMBER'
  | 'STRING'
  | '>='
  | '<='
  | '=='
  | '!='
  | '>'
  | '<'
  | '='
  | '('
  | ')'
  | '{'
  | '}';

interface Token {
  readonly type: TokenType;
  readonly value: string;
  readonly pos: number;
}

const RESERVED: Record<string, TokenType> = {
  is: 'IS',
  and: 'AND',
  or: 'OR',
  not: 'NOT',
  contains: 'CONTAINS',
  matches: 'MATCHES',
  true: 'TRUE',
  false: 'FALSE',
  undefined: 'UNDEFINED',
  null: 'NULL',
  empty: 'EMPTY',
};

const NUMBER_RE = /-?[0-9]+(?:\.[0-9]+)?/y;
const WORD_RE = /(?:[\p{L}\p{N}\p{M}_\-.:;]+|"[^"]*"|'[^']*')/uy;
const COMMENT_RE = /#[^\n]*/y;
const OPERATORS: readonly TokenType[] = ['>=', '<=', '==', '!=', '>', '<', '=', '(', ')', '{', '}'];

function lineCol(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `line ${line}, column ${col}`;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  const sticky = (re: RegExp): string | null => {
    re.lastIndex = pos;
    const m = re.exec(text);
    return m === null ? null : m[0];
  };
  while (pos < text.length) {
    const ch = text[pos] as string;
    if (ch === ' ' || ch === '\t' || ch === '\n') {
      pos++;
      continue;
    }
    const number = sticky(NUMBER_RE);
    if (number !== null) {
      tokens.push({ type: 'NUMBER', value: number, pos });
      pos += number.length;
      continue;
    }
    const word = sticky(WORD_RE);
    if (word !== null) {
      const reserved = RESERVED[word.toLowerCase()];
      tokens.push(
        reserved === undefined
          ? { type: 'STRING', value: word, pos }
          : { type: reserved, value: word.toLowerCase(), pos },
      );
      pos += word.length;
      continue;
    }
    const comment = sticky(COMMENT_RE);
    if (comment !== null) {
      pos += comment.length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, pos));
    if (op !== undefined) {
      tokens.push({ type: op, value: op, pos });
      pos += op.length;
      continue;
    }
    const bad = ch === '"' || ch === "'" ? 'an unclosed quote' : `'${ch}'`;
    throw new PredicateSyntaxError(
      `Invalid condition '${text}': unexpected ${bad} at ${lineCol(text, pos)}.`,
      text,
    );
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Parser (recursive descent reproducing pypred's LALR grammar and precedence)

const COMPARISONS: Partial<Record<TokenType, '=' | '!=' | '>' | '>=' | '<' | '<='>> = {
  '=': '=',
  '==': '=',
  IS: '=',
  '!=': '!=',
  '>': '>',
  '>=': '>=',
  '<': '<',
  '<=': '<=',
};

class Parser {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: readonly Token[],
  ) {}

  parse(): PredicateAst {
    if (this.tokens.length === 0) this.fail('the condition is empty');
    const ast = this.expression();
    const extra = this.peek();
    if (extra !== undefined) this.unexpected(extra);
    return ast;
  }

  private peek(): Token | undefined {
    return this.tokens[this.index];
  }

  private next(): Token {
    const token = this.tokens[this.index];
    if (token === undefined) this.fail('unexpected end of condition');
    this.index++;
    return token;
  }

  private fail(reason: string): never {
    throw new PredicateSyntaxError(`Invalid condition '${this.text}': ${reason}.`, this.text);
  }

  private unexpected(token: Token): never {
    this.fail(`unexpected '${token.value}' at ${lineCol(this.text, token.pos)}`);
  }

  private enter(): void {
    if (++this.depth > MAX_PREDICATE_DEPTH) {
      this.fail(`nested deeper than ${MAX_PREDICATE_DEPTH} levels`);
    }
  }

  /** expression := unary ((and | or) expression)? — one level, right-associative. */
  private expression(): PredicateAst {
    this.enter();
    const left = this.unary();
    const op = this.peek();
    let result = left;
    if (op?.type === 'AND' || op?.type === 'OR') {
      this.index++;
      const right = this.expression();
      result = { kind: 'logical', op: op.type === 'AND' ? 'and' : 'or', left, right };
    }
    this.depth--;
    return result;
  }

  /** unary := not unary | term */
  private unary(): PredicateAst {
    if (this.peek()?.type === 'NOT') {
      this.index++;
      this.enter();
      const operand = this.unary();
      this.depth--;
      return { kind: 'not', operand };
    }
    return this.term();
  }

  private term(): PredicateAst {
    const left = this.factor();
    const op = this.peek();
    if (op === undefined) return left;
    if (op.type === 'IS' && this.tokens[this.index + 1]?.type === 'NOT') {
      this.index += 2;
      return { kind: 'compare', op: '!=', left, right: this.factor() };
    }
    const comparison = COMPARISONS[op.type];
    if (comparison !== undefined) {
      this.index++;
      return { kind: 'compare', op: comparison, left, right: this.factor() };
    }
    if (op.type === 'CONTAINS') {
      this.index++;
      const right = this.factor();
      if (right.kind !== 'literal' && right.kind !== 'number' && right.kind !== 'constant') {
        this.fail("the right side of 'contains' must be a string, number or constant");
      }
      return { kind: 'contains', left, right };
    }
    if (op.type === 'MATCHES') {
      this.index++;
      const right = this.factor();
      if (right.kind !== 'literal') this.fail("'matches' needs a regular expression string");
      return { kind: 'matches', left, regex: compileRegex(right.text, this.text) };
    }
    return left;
  }

  private factor(): PredicateAst {
    const token = this.next();
    switch (token.type) {
      case 'STRING':
        return literal(token.value);
      case 'NUMBER':
        return { kind: 'number', value: Number.parseFloat(token.value) };
      case 'TRUE':
        return { kind: 'constant', value: true };
      case 'FALSE':
        return { kind: 'constant', value: false };
      case 'NULL':
        return { kind: 'constant', value: null };
      case 'UNDEFINED':
        return { kind: 'undefined' };
      case 'EMPTY':
        return { kind: 'empty' };
      case '(': {
        this.enter();
        const inner = this.expression();
        const close = this.next();
        if (close.type !== ')') this.unexpected(close);
        this.depth--;
        return inner;
      }
      case '{': {
        this.enter();
        const items: PredicateAst[] = [];
        while (this.peek() !== undefined && this.peek()?.type !== '}') items.push(this.factor());
        this.next();
        this.depth--;
        return { kind: 'set', items };
      }
      case 'AND':
      case 'OR':
      case 'NOT':
      case 'IS':
      case 'CONTAINS':
      case 'MATCHES':
      case '>=':
      case '<=':
      case '==':
      case '!=':
      case '>':
      case '<':
      case '=':
      case ')':
      case '}':
        return this.unexpected(token);
    }
  }
}

function literal(raw: string): PredicateAst {
  const first = raw[0];
  const quoted = raw.length >= 2 && (first === '"' || first === "'") && raw.endsWith(first);
  return { kind: 'literal', text: quoted ? raw.slice(1, -1) : raw, quoted };
}

// ---------------------------------------------------------------------------------------------
// Regular expressions (Python `re` syntax → JavaScript; `/re/flags` form)

const FLAG_MAP: Record<string, string> = { i: 'i', m: 'm', s: 's', u: '', l: '' };

function compileRegex(source: string, predicate: string): RegExp {
  let pattern = source;
  let flags = '';
  const slashed = /^\/([\s\S]*)\/([imslu]*)$/.exec(source);
  if (slashed !== null) {
    pattern = slashed[1] as string;
    for (const f of slashed[2] as string) flags += FLAG_MAP[f] ?? '';
  }
  const inline = /^\(\?([aiLmsux]+)\)/.exec(pattern);
  if (inline !== null) {
    for (const f of inline[1] as string) {
      if (f === 'x') {
        throw new PredicateSyntaxError(
          `Invalid condition '${predicate}': verbose regular expressions (?x) are not supported.`,
          predicate,
        );
      }
      if (f === 'i' || f === 'm' || f === 's') flags += f;
    }
    pattern = pattern.slice(inline[0].length);
  }
  const dedupedFlags = [...new Set(flags)].join('');
  try {
    return new RegExp(translatePythonRegex(pattern, dedupedFlags.includes('m')), dedupedFlags);
  } catch (e) {
    throw new PredicateSyntaxError(
      `Invalid condition '${predicate}': the regular expression '${source}' does not compile (${
        e instanceof Error ? e.message : String(e)
      }).`,
      predicate,
    );
  }
}

/** Rewrites the Python-only parts of a regex: named groups, `\A`, `\Z`, and `$`. */
function translatePythonRegex(pattern: string, multiline: boolean): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && next === 'A') out += '(?<![\\s\\S])';
      else if (!inClass && next === 'Z') out += '(?![\\s\\S])';
      else out += ch + next;
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') out += pattern[++i];
      continue;
    }
    if (pattern.startsWith('(?P<', i)) {
      out += '(?<';
      i += 3;
      continue;
    }
    const backref = /^\(\?P=(\w+)\)/.exec(pattern.slice(i));
    if (backref !== null) {
      out += `\\k<${backref[1]}>`;
      i += backref[0].length - 1;
      continue;
    }
    // Python's `$` (without MULTILINE) also matches just before a final newline.
    if (ch === '$' && !multiline) {
      out += '(?=\\n?(?![\\s\\S]))';
      continue;
    }
    out += ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

const UNDEFINED = Symbol('Undefined');
const EMPTY = Symbol('Empty');

/** A set literal's value (Python frozenset of hashable values). */
class PySet {
  constructor(readonly items: readonly unknown[]) {}

  has(value: unknown): boolean {
    return this.items.some((item) => valueEquals(item, value));
  }
}

class EvaluationError extends Error {}

function hasLength(value: unknown): number | null {
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  if (isPlainObject(value)) return Object.keys(value).length;
  if (value instanceof PySet) return value.items.length;
  return null;
}

function valueEquals(a: unknown, b: unknown): boolean {
  if (a === UNDEFINED) return b === UNDEFINED || b === EMPTY;
  if (a === EMPTY) return b === UNDEFINED || b === EMPTY || hasLength(b) === 0;
  if (b === UNDEFINED) return false;
  if (b === EMPTY) return hasLength(a) === 0;
  if (a instanceof PySet || b instanceof PySet) {
    if (!(a instanceof PySet) || !(b instanceof PySet)) return false;
    return a.items.every((x) => b.has(x)) && b.items.every((x) => a.has(x));
  }
  return pyEquals(a, b);
}

function valueNotEquals(a: unknown, b: unknown): boolean {
  // pypred's Undefined defines its own `!=`: it differs from everything but Undefined (even
  // from `empty`, which it equals).
  if (a === UNDEFINED) return b !== UNDEFINED;
  return !valueEquals(a, b);
}

function truthy(value: unknown): boolean {
  if (value === UNDEFINED || value === EMPTY) return false;
  if (value instanceof PySet) return value.items.length > 0;
  return pyTruthy(value);
}

function isHashable(value: unknown): boolean {
  return !Array.isArray(value) && !isPlainObject(value);
}

function resolveIdentifier(name: string, document: Record<string, unknown>): unknown {
  if (Object.prototype.hasOwnProperty.call(document, name)) return document[name];
  if (!name.includes('.')) return UNDEFINED;
  let root: unknown = document;
  for (const part of name.split('.')) {
    if (isPlainObject(root)) {
      if (!Object.prototype.hasOwnProperty.call(root, part)) return UNDEFINED;
      root = root[part];
    } else if (typeof root === 'string' || Array.isArray(root)) {
      // Python: `part in root` holds, then `root[part]` raises.
      if (root.includes(part)) throw new EvaluationError(`cannot index into ${name}`);
      return UNDEFINED;
    } else {
      throw new EvaluationError(`cannot look up '${part}' in a scalar (${name})`);
    }
  }
  return root;
}

function evaluate(ast: PredicateAst, document: Record<string, unknown>): unknown {
  switch (ast.kind) {
    case 'logical': {
      const left = truthy(evaluate(ast.left, document));
      if (ast.op === 'and') return left && truthy(evaluate(ast.right, document));
      return left || truthy(evaluate(ast.right, document));
    }
    case 'not':
      return !truthy(evaluate(ast.operand, document));
    case 'compare': {
      const left = evaluate(ast.left, document);
      const right = evaluate(ast.right, document);
      if (ast.op === '=') return valueEquals(left, right);
      if (ast.op === '!=') return valueNotEquals(left, right);
      if (left === UNDEFINED || left === EMPTY || right === UNDEFINED || right === EMPTY) {
        return false;
      }
      if (left instanceof PySet || right instanceof PySet) {
        throw new EvaluationError('set ordering is not supported');
      }
      const c = pyCompare(left, right);
      if (ast.op === '>') return c > 0;
      if (ast.op === '>=') return c >= 0;
      if (ast.op === '<') return c < 0;
      return c <= 0;
    }
    case 'contains': {
      const left = evaluate(ast.left, document);
      if (typeof left === 'string') {
        const right = evaluate(ast.right, document);
        if (typeof right !== 'string') throw new EvaluationError("'in <string>' needs a string");
        return left.includes(right);
      }
      if (Array.isArray(left)) {
        const right = evaluate(ast.right, document);
        return left.some((item) => valueEquals(item, right));
      }
      if (isPlainObject(left)) {
        const right = evaluate(ast.right, document);
        if (!isHashable(right)) throw new EvaluationError('unhashable type');
        return typeof right === 'string' && Object.prototype.hasOwnProperty.call(left, right);
      }
      if (left instanceof PySet) {
        const right = evaluate(ast.right, document);
        if (!isHashable(right)) throw new EvaluationError('unhashable type');
        return left.has(right);
      }
      return false;
    }
    case 'matches': {
      const left = evaluate(ast.left, document);
      if (typeof left !== 'string' || left.length > MAX_MATCH_SUBJECT_LENGTH) return false;
      ast.regex.lastIndex = 0;
      return ast.regex.test(left);
    }
    case 'literal':
      return ast.quoted ? ast.text : resolveIdentifier(ast.text, document);
    case 'number':
    case 'constant':
      return ast.value;
    case 'undefined':
      return UNDEFINED;
    case 'empty':
      return EMPTY;
    case 'set': {
      const items = ast.items.map((item) => {
        if (item.kind !== 'literal' && item.kind !== 'number' && item.kind !== 'constant') {
          throw new EvaluationError('a set holds strings, numbers and constants only');
        }
        const value = evaluate(item, document);
        if (!isHashable(value)) throw new EvaluationError('unhashable type in a set');
        return value;
      });
      return new PySet(items);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

const CACHE_LIMIT = 512;
const cache = new Map<string, PredicateAst | PredicateSyntaxError>();

/** Parses a (Jinja-rendered) condition; throws `PredicateSyntaxError` when it is invalid. */
export function parsePredicate(text: string): PredicateAst {
  if (text.length > MAX_PREDICATE_LENGTH) {
    throw new PredicateSyntaxError(
      `Invalid condition: longer than ${MAX_PREDICATE_LENGTH} characters.`,
      text.slice(0, 200),
    );
  }
  return new Parser(text, tokenize(text)).parse();
}

function cachedParse(text: string): PredicateAst {
  let entry = cache.get(text);
  if (entry === undefined) {
    try {
      entry = parsePredicate(text);
    } catch (e) {
      if (!(e instanceof PredicateSyntaxError)) throw e;
      entry = e;
    }
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(text, entry);
  }
  if (entry instanceof PredicateSyntaxError) throw entry;
  return entry;
}

/**
 * Evaluates a condition against `{context, slots}` (or any document). Invalid conditions and
 * evaluation errors (e.g. `"5" > 3`) give `false`, as in Rasa.
 */
export function evaluatePredicate(predicate: string, document: Record<string, unknown>): boolean {
  try {
    return truthy(evaluate(cachedParse(predicate), document));
  } catch (e) {
    if (
      e instanceof PredicateSyntaxError ||
      e instanceof EvaluationError ||
      e instanceof PythonTypeError
    ) {
      return false;
    }
    throw e;
  }
}

/**
 * The unquoted identifiers of a condition (`slots.x`, `context.y`, or a stray bare word), in order
 * of appearance, each once — for validation. Throws `PredicateSyntaxError` when it does not parse.
 */
export function predicateIdentifiers(predicate: string): string[] {
  const found: string[] = [];
  const walk = (ast: PredicateAst): void => {
    switch (ast.kind) {
      case 'logical':
      case 'compare':
      case 'contains':
        walk(ast.left);
        walk(ast.right);
        return;
      case 'not':
        walk(ast.operand);
        return;
      case 'matches':
        walk(ast.left);
        return;
      case 'set':
        ast.items.forEach(walk);
        return;
      case 'literal':
        if (!ast.quoted && !found.includes(ast.text)) found.push(ast.text);
        return;
      case 'number':
      case 'constant':
      case 'undefined':
      case 'empty':
        return;
    }
  };
  walk(cachedParse(predicate));
  return found;
}
