/**
 * Conditions of flows (`if` of links, flow guards, rejections): a small pypred-compatible
 * parser. MINIMAL version for the flows reader and its validation (syntax check and the
 * identifiers a predicate reads); the full evaluator replaces this file.
 */

export class PredicateSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PredicateSyntaxError';
  }
}

type Token =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'constant'; readonly value: string }
  | { readonly kind: 'identifier'; readonly value: string }
  | { readonly kind: 'op'; readonly value: string }
  | { readonly kind: 'punct'; readonly value: string };

export type PredicateNode =
  | { readonly kind: 'literal'; readonly token: Token }
  | { readonly kind: 'set'; readonly items: readonly Token[] }
  | { readonly kind: 'not'; readonly operand: PredicateNode }
  | {
      readonly kind: 'logic';
      readonly op: 'and' | 'or';
      readonly left: PredicateNode;
      readonly right: PredicateNode;
    }
  | {
      readonly kind: 'compare';
      readonly op: string;
      readonly left: PredicateNode;
      readonly right: PredicateNode;
    };

const CONSTANTS = ['true', 'false', 'null', 'undefined', 'empty'];
const WORD_OPS = ['and', 'or', 'not', 'is', 'contains', 'matches'];
const COMPARE_OPS = ['=', '==', '!=', '>', '>=', '<', '<=', 'is', 'is not', 'contains', 'matches'];

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new PredicateSyntaxError(`unterminated string at ${i}`);
      tokens.push({ kind: 'string', value: text.slice(i + 1, end) });
      i = end + 1;
    } else if ('(){}'.includes(c)) {
      tokens.push({ kind: 'punct', value: c });
      i++;
    } else if ('=!<>'.includes(c)) {
      const two = text.slice(i, i + 2);
      const op = ['==', '!=', '>=', '<='].includes(two) ? two : c;
      if (op === '!') throw new PredicateSyntaxError(`unexpected '!' at ${i}`);
      tokens.push({ kind: 'op', value: op });
      i += op.length;
    } else {
      let j = i;
      while (j < text.length && !/[\s(){}=!<>"']/.test(text[j] as string)) j++;
      const word = text.slice(i, j);
      const lower = word.toLowerCase();
      if (/^-?\d+(\.\d+)?$/.test(word)) tokens.push({ kind: 'number', value: Number(word) });
      else if (CONSTANTS.includes(lower)) tokens.push({ kind: 'constant', value: lower });
      else if (WORD_OPS.includes(lower)) tokens.push({ kind: 'op', value: lower });
      else tokens.push({ kind: 'identifier', value: word });
      i = j;
    }
  }
  return tokens;
}

/** Parses a predicate; throws {@link PredicateSyntaxError} when it is not valid. */
export function parsePredicate(text: string): PredicateNode {
  const tokens = tokenize(text);
  let pos = 0;
  const peek = (): Token | undefined => tokens[pos];
  const isOp = (t: Token | undefined, v: string): boolean => t?.kind === 'op' && t.value === v;
  const isPunct = (t: Token | undefined, v: string): boolean =>
    t?.kind === 'punct' && t.value === v;

  const factor = (): PredicateNode => {
    const t = peek();
    if (t === undefined) throw new PredicateSyntaxError('unexpected end of predicate');
    if (isPunct(t, '{')) {
      pos++;
      const items: Token[] = [];
      while (!isPunct(peek(), '}')) {
        const item = peek();
        if (item === undefined || item.kind === 'op' || item.kind === 'punct') {
          throw new PredicateSyntaxError('invalid set literal');
        }
        items.push(item);
        pos++;
      }
      pos++;
      return { kind: 'set', items };
    }
    if (t.kind === 'op' || t.kind === 'punct') {
      throw new PredicateSyntaxError(`unexpected '${t.value}'`);
    }
    pos++;
    return { kind: 'literal', token: t };
  };

  const term = (): PredicateNode => {
    const t = peek();
    if (isOp(t, 'not')) {
      pos++;
      return { kind: 'not', operand: term() };
    }
    if (isPunct(t, '(')) {
      pos++;
      const inner = expression();
      if (!isPunct(peek(), ')')) throw new PredicateSyntaxError("missing ')'");
      pos++;
      return inner;
    }
    const left = factor();
    const next = peek();
    if (next?.kind === 'op' && COMPARE_OPS.includes(next.value)) {
      pos++;
      let op = next.value;
      if (op === 'is' && isOp(peek(), 'not')) {
        pos++;
        op = 'is not';
      }
      return { kind: 'compare', op, left, right: factor() };
    }
    return left;
  };

  const expression = (): PredicateNode => {
    const left = term();
    const t = peek();
    if (isOp(t, 'and') || isOp(t, 'or')) {
      pos++;
      return { kind: 'logic', op: t?.value as 'and' | 'or', left, right: expression() };
    }
    return left;
  };

  if (tokens.length === 0) throw new PredicateSyntaxError('empty predicate');
  const node = expression();
  if (pos < tokens.length) {
    throw new PredicateSyntaxError(`unexpected '${String(tokens[pos]?.value)}'`);
  }
  return node;
}

/** The unquoted identifiers a predicate reads (`slots.x`, `context.y`, …), in order, unique. */
export function predicateIdentifiers(predicate: string): string[] {
  const out: string[] = [];
  for (const t of tokenize(predicate)) {
    if (t.kind === 'identifier' && !out.includes(t.value)) out.push(t.value);
  }
  return out;
}

/** Evaluates a predicate against `{context, slots}`; any error makes it false. */
export function evaluatePredicate(predicate: string, document: Record<string, unknown>): boolean {
  try {
    return truthy(evaluate(parsePredicate(predicate), document));
  } catch {
    return false;
  }
}

const UNDEFINED = Symbol('undefined');
const EMPTY = Symbol('empty');

function lookup(name: string, document: Record<string, unknown>): unknown {
  if (name in document) return document[name];
  let value: unknown = document;
  for (const part of name.split('.')) {
    if (value === null || typeof value !== 'object' || !(part in value)) return UNDEFINED;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function value(token: Token, document: Record<string, unknown>): unknown {
  switch (token.kind) {
    case 'string':
    case 'number':
      return token.value;
    case 'identifier':
      return lookup(token.value, document);
    case 'constant':
      return token.value === 'true'
        ? true
        : token.value === 'false'
          ? false
          : token.value === 'null'
            ? null
            : token.value === 'empty'
              ? EMPTY
              : UNDEFINED;
    case 'op':
    case 'punct':
      throw new Error('not a value');
  }
}

function truthy(v: unknown): boolean {
  if (v === UNDEFINED || v === EMPTY || v === null || v === undefined) return false;
  if (Array.isArray(v) || typeof v === 'string') return v.length > 0;
  if (v instanceof Set) return v.size > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

function equal(a: unknown, b: unknown): boolean {
  const isEmpty = (v: unknown): boolean =>
    v === EMPTY || v === UNDEFINED || ((typeof v === 'string' || Array.isArray(v)) && !v.length);
  if (a === EMPTY || b === EMPTY) return isEmpty(a) && isEmpty(b);
  return a === b;
}

function evaluate(node: PredicateNode, document: Record<string, unknown>): unknown {
  switch (node.kind) {
    case 'literal':
      return value(node.token, document);
    case 'set':
      return new Set(node.items.map((t) => value(t, document)));
    case 'not':
      return !truthy(evaluate(node.operand, document));
    case 'logic': {
      const left = truthy(evaluate(node.left, document));
      if (node.op === 'and') return left && truthy(evaluate(node.right, document));
      return left || truthy(evaluate(node.right, document));
    }
    case 'compare': {
      const l = evaluate(node.left, document);
      const r = evaluate(node.right, document);
      switch (node.op) {
        case '=':
        case '==':
        case 'is':
          return equal(l, r);
        case '!=':
        case 'is not':
          return !equal(l, r);
        case 'contains':
          if (l instanceof Set) return l.has(r);
          if (typeof l === 'string' && typeof r === 'string') return l.includes(r);
          return Array.isArray(l) ? l.includes(r) : false;
        case 'matches':
          return typeof l === 'string' && typeof r === 'string' && new RegExp(r).test(l);
        default: {
          if (typeof l !== 'number' || typeof r !== 'number') {
            if (typeof l === 'string' && typeof r === 'string') return compare(node.op, l, r);
            throw new Error('cannot order');
          }
          return compare(node.op, l, r);
        }
      }
    }
  }
}

function compare<T extends number | string>(op: string, l: T, r: T): boolean {
  return op === '>' ? l > r : op === '>=' ? l >= r : op === '<' ? l < r : l <= r;
}
