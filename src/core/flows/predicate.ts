/**
 * MINIMAL stand-in (the predicates helper ships the real pypred-compatible evaluator): enough
 * of pypred for the executor — comparisons (`=`, `==`, `!=`, `is`, `is not`, `<`, `<=`, `>`,
 * `>=`, `contains`), `and` / `or` (one precedence level, right-associative), `not`,
 * parentheses, quoted strings, numbers, the constants `true false null undefined empty`, and
 * identifiers looked up in the document (whole key, then dotted path; absent: Undefined).
 */

export class PredicateSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PredicateSyntaxError';
  }
}

type Node =
  | { readonly kind: 'literal'; readonly value: unknown }
  | { readonly kind: 'ident'; readonly name: string }
  | { readonly kind: 'not'; readonly operand: Node }
  | { readonly kind: 'logic'; readonly op: 'and' | 'or'; readonly left: Node; readonly right: Node }
  | { readonly kind: 'compare'; readonly op: string; readonly left: Node; readonly right: Node };

const UNDEFINED = Symbol('undefined');
const EMPTY = Symbol('empty');

const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(-?\d+(?:\.\d+)?)(?![\w.])|(>=|<=|!=|==|=|>|<|\(|\))|([^\s()=!<>]+))/y;

function tokenize(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const m = TOKEN.exec(text);
    if (!m) throw new PredicateSyntaxError(`Unexpected input at ${TOKEN.lastIndex}: ${text}`);
    out.push(m[1] ?? m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

const COMPARISONS = new Set(['=', '==', '!=', '>', '>=', '<', '<=', 'is', 'contains']);

/** Parses a predicate; throws `PredicateSyntaxError`. */
export function parsePredicate(text: string): Node {
  const tokens = tokenize(text);
  let i = 0;
  const peek = (): string | undefined => tokens[i];
  const lower = (): string | undefined => peek()?.toLowerCase();
  const operand = (): Node => {
    const t = tokens[i++];
    if (t === undefined) throw new PredicateSyntaxError(`Unexpected end of predicate: ${text}`);
    if (/^["']/.test(t)) return { kind: 'literal', value: t.slice(1, -1) };
    if (/^-?\d+(\.\d+)?$/.test(t)) return { kind: 'literal', value: Number(t) };
    const l = t.toLowerCase();
    if (l === 'true' || l === 'false') return { kind: 'literal', value: l === 'true' };
    if (l === 'null') return { kind: 'literal', value: null };
    if (l === 'undefined') return { kind: 'literal', value: UNDEFINED };
    if (l === 'empty') return { kind: 'literal', value: EMPTY };
    return { kind: 'ident', name: t };
  };
  const unary = (): Node => {
    if (lower() === 'not') {
      i++;
      return { kind: 'not', operand: unary() };
    }
    if (peek() === '(') {
      i++;
      const inner = expr();
      if (tokens[i++] !== ')') throw new PredicateSyntaxError(`Missing ')': ${text}`);
      return inner;
    }
    const left = operand();
    const op = lower();
    if (op !== undefined && COMPARISONS.has(op)) {
      i++;
      let name = op;
      if (op === 'is' && lower() === 'not') {
        i++;
        name = 'is not';
      }
      return { kind: 'compare', op: name, left, right: operand() };
    }
    return left;
  };
  const expr = (): Node => {
    const left = unary();
    const op = lower();
    if (op === 'and' || op === 'or') {
      i++;
      return { kind: 'logic', op, left, right: expr() };
    }
    return left;
  };
  const node = expr();
  if (i < tokens.length) throw new PredicateSyntaxError(`Unexpected '${tokens[i]}': ${text}`);
  return node;
}

class EvaluationError extends Error {}

function resolve(node: Node, doc: Record<string, unknown>): unknown {
  if (node.kind === 'literal') return node.value;
  if (node.kind === 'ident') {
    if (node.name in doc) return doc[node.name];
    let value: unknown = doc;
    for (const part of node.name.split('.')) {
      if (typeof value !== 'object' || value === null || !(part in value)) return UNDEFINED;
      value = (value as Record<string, unknown>)[part];
    }
    return value;
  }
  return evaluate(node, doc);
}

function isEmptyValue(v: unknown): boolean {
  if (typeof v === 'string' || Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === EMPTY || b === EMPTY) {
    const other = a === EMPTY ? b : a;
    return other === EMPTY || other === UNDEFINED || isEmptyValue(other);
  }
  return JSON.stringify(a) === JSON.stringify(b) && typeof a === typeof b;
}

function truthy(v: unknown): boolean {
  if (v === UNDEFINED || v === EMPTY || v === null || v === undefined) return false;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

function evaluate(node: Node, doc: Record<string, unknown>): boolean {
  switch (node.kind) {
    case 'not':
      return !evaluate(node.operand, doc);
    case 'logic':
      return node.op === 'and'
        ? evaluate(node.left, doc) && evaluate(node.right, doc)
        : evaluate(node.left, doc) || evaluate(node.right, doc);
    case 'compare': {
      const a = resolve(node.left, doc);
      const b = resolve(node.right, doc);
      switch (node.op) {
        case '=':
        case '==':
        case 'is':
          return equal(a, b);
        case '!=':
        case 'is not':
          return !equal(a, b);
        case 'contains':
          if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
          if (Array.isArray(a)) return a.some((x) => equal(x, b));
          return false;
        default: {
          if (typeof a === 'symbol' || typeof b === 'symbol') return false;
          if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) {
            throw new EvaluationError(`cannot compare ${typeof a} with ${typeof b}`);
          }
          const x = a;
          const y = b as number | string;
          if (node.op === '>') return x > y;
          if (node.op === '>=') return x >= y;
          if (node.op === '<') return x < y;
          return x <= y;
        }
      }
    }
    case 'ident':
    case 'literal':
      return truthy(resolve(node, doc));
  }
}

/** Whether the predicate holds for `document` (`{context, slots}`); any error → false. */
export function evaluatePredicate(predicate: string, document: Record<string, unknown>): boolean {
  try {
    return evaluate(parsePredicate(predicate), document);
  } catch {
    return false;
  }
}

/** The identifiers (unquoted names) a predicate looks up. */
export function predicateIdentifiers(predicate: string): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    if (n.kind === 'ident') out.push(n.name);
    else if (n.kind === 'not') walk(n.operand);
    else if (n.kind === 'logic' || n.kind === 'compare') {
      walk(n.left);
      walk(n.right);
    }
  };
  walk(parsePredicate(predicate));
  return out;
}
