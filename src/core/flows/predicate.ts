/**
 * Flow conditions (pypred predicates) — a MINIMAL stand-in with the agreed exports, so the
 * command stages can evaluate flow guards; the full evaluator replaces this file.
 *
 * Supported: `and` / `or` (one precedence level, right-associative), `not`, parentheses,
 * `=`, `==`, `!=`, `is`, `is not`, `>`, `>=`, `<`, `<=`, quoted strings, numbers,
 * `true` / `false` / `null`, dotted identifiers looked up in the document (absent: undefined).
 * Any evaluation error makes the predicate false.
 */

export class PredicateSyntaxError extends Error {}

export type PredicateNode =
  | { readonly k: 'lit'; readonly v: unknown }
  | { readonly k: 'id'; readonly name: string }
  | { readonly k: 'not'; readonly e: PredicateNode }
  | {
      readonly k: 'bool';
      readonly op: 'and' | 'or';
      readonly l: PredicateNode;
      readonly r: PredicateNode;
    }
  | {
      readonly k: 'cmp';
      readonly op: string;
      readonly l: PredicateNode;
      readonly r: PredicateNode;
    };

const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(>=|<=|==|!=|=|>|<|\(|\))|([^\s()=!<>]+))/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (m === null) throw new PredicateSyntaxError(`Unexpected input at ${pos}: ${text}`);
    tokens.push(m[1] ?? m[2] ?? m[3] ?? '');
    pos = TOKEN.lastIndex;
  }
  return tokens;
}

const CMP = new Set(['=', '==', '!=', '>', '>=', '<', '<=', 'is']);

export function parsePredicate(text: string): PredicateNode {
  const tokens = tokenize(text);
  let i = 0;
  const peek = (): string | undefined => tokens[i];
  const lower = (): string | undefined => tokens[i]?.toLowerCase();
  const expr = (): PredicateNode => {
    const l = unary();
    const op = lower();
    if (op === 'and' || op === 'or') {
      i++;
      return { k: 'bool', op, l, r: expr() };
    }
    return l;
  };
  const unary = (): PredicateNode => {
    if (lower() === 'not') {
      i++;
      return { k: 'not', e: unary() };
    }
    const l = factor();
    const op = lower();
    if (op !== undefined && CMP.has(op)) {
      i++;
      let cmp = op;
      if (op === 'is' && lower() === 'not') {
        i++;
        cmp = 'is not';
      }
      return { k: 'cmp', op: cmp, l, r: factor() };
    }
    return l;
  };
  const factor = (): PredicateNode => {
    const t = peek();
    if (t === undefined) throw new PredicateSyntaxError(`Unexpected end: ${text}`);
    i++;
    if (t === '(') {
      const e = expr();
      if (peek() !== ')') throw new PredicateSyntaxError(`Missing ')': ${text}`);
      i++;
      return e;
    }
    if (t.startsWith('"') || t.startsWith("'")) return { k: 'lit', v: t.slice(1, -1) };
    if (/^-?\d+(\.\d+)?$/.test(t)) return { k: 'lit', v: Number(t) };
    const l = t.toLowerCase();
    if (l === 'true') return { k: 'lit', v: true };
    if (l === 'false') return { k: 'lit', v: false };
    if (l === 'null') return { k: 'lit', v: null };
    if (l === 'undefined') return { k: 'lit', v: undefined };
    if (t === ')' || CMP.has(l) || l === 'and' || l === 'or') {
      throw new PredicateSyntaxError(`Unexpected '${t}': ${text}`);
    }
    return { k: 'id', name: t };
  };
  const node = expr();
  if (i !== tokens.length) throw new PredicateSyntaxError(`Unexpected '${peek()}': ${text}`);
  return node;
}

function lookup(name: string, document: Record<string, unknown>): unknown {
  if (name in document) return document[name];
  let current: unknown = document;
  for (const part of name.split('.')) {
    if (current === null || typeof current !== 'object' || !(part in current)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v !== null && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

function evaluate(node: PredicateNode, document: Record<string, unknown>): unknown {
  switch (node.k) {
    case 'lit':
      return node.v;
    case 'id':
      return lookup(node.name, document);
    case 'not':
      return !truthy(evaluate(node.e, document));
    case 'bool': {
      const l = truthy(evaluate(node.l, document));
      if (node.op === 'and') return l && truthy(evaluate(node.r, document));
      return l || truthy(evaluate(node.r, document));
    }
    case 'cmp': {
      const l = evaluate(node.l, document);
      const r = evaluate(node.r, document);
      switch (node.op) {
        case '=':
        case '==':
        case 'is':
          return l === r;
        case '!=':
        case 'is not':
          return l !== r;
        default:
          if (typeof l !== typeof r || (typeof l !== 'number' && typeof l !== 'string')) {
            throw new Error('incomparable');
          }
          if (node.op === '>') return (l as number) > (r as number);
          if (node.op === '>=') return (l as number) >= (r as number);
          if (node.op === '<') return (l as number) < (r as number);
          return (l as number) <= (r as number);
      }
    }
  }
}

/** Whether the predicate holds for `document` (`{context, slots}`); errors → false. */
export function evaluatePredicate(predicate: string, document: Record<string, unknown>): boolean {
  try {
    return truthy(evaluate(parsePredicate(predicate), document));
  } catch {
    return false;
  }
}

/** The identifiers (unquoted names) a predicate refers to. */
export function predicateIdentifiers(predicate: string): string[] {
  const out: string[] = [];
  const walk = (n: PredicateNode): void => {
    if (n.k === 'id') out.push(n.name);
    else if (n.k === 'not') walk(n.e);
    else if (n.k === 'bool' || n.k === 'cmp') {
      walk(n.l);
      walk(n.r);
    }
  };
  walk(parsePredicate(predicate));
  return out;
}
