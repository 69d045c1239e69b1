import {
  isNumeric,
  isPlainObject,
  pyCompare,
  pyEquals,
  pyRepr,
  pyStr,
  PythonTypeError,
  pyTruthy,
} from 'src/core/flows/python-values';

/**
 * The subset of Jinja that CALM needs: flow conditions and action names (`{{context.x}}`),
 * default pattern responses (`{{ context.corrected_slots.keys()|join(', ') }}`) and LLM prompt
 * templates (`{% for %}`, `{% if %}`, `loop.last`, `|length`).
 *
 * Behaves like a default `jinja2.Template`: no autoescaping, one trailing newline dropped, values
 * printed the way Python's `str()` prints them (`None`, `True`, `['a', 'b']`), and unknown names
 * are Undefined: they print as nothing, are false, iterate as nothing, and looking anything up on
 * them is Undefined again.
 *
 * Supported: `{{ expr }}`, `{% if %}/{% elif %}/{% else %}/{% endif %}`,
 * `{% for x in xs [if cond] %}…{% else %}…{% endfor %}` (with `loop.*`), `{% set x = expr %}`,
 * `{# comments #}`, whitespace control (`{%-`, `-%}`, …). Expressions: literals (strings,
 * numbers, `true`/`True`, `none`/`None`, lists, dicts), names, `.attr`, `[key]`, the methods
 * `keys values items get lower upper strip split replace startswith endswith`, filters, tests
 * (`is defined`, `is none`, …), `not and or`, comparisons, `in`, arithmetic, `~`, and
 * `a if cond else b`.
 */

/** A template that does not parse, or an expression that cannot be rendered. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

// ---------------------------------------------------------------------------------------------
// Values

const UNDEFINED: unique symbol = Symbol('Undefined');
type Value = unknown;

function isUndefined(v: Value): v is typeof UNDEFINED {
  return v === UNDEFINED || v === undefined;
}

function truthy(v: Value): boolean {
  return !isUndefined(v) && pyTruthy(v);
}

function str(v: Value): string {
  return isUndefined(v) ? '' : pyStr(v);
}

function equals(a: Value, b: Value): boolean {
  if (isUndefined(a) || isUndefined(b)) return isUndefined(a) && isUndefined(b);
  return pyEquals(a, b);
}

function iterate(v: Value, what: string): Value[] {
  if (isUndefined(v)) return [];
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isPlainObject(v)) return Object.keys(v);
  throw new TemplateError(`'${pyRepr(v)}' is not iterable (${what}).`);
}

function lookup(obj: Value, key: Value): Value {
  if (isUndefined(obj) || obj === null) return UNDEFINED;
  if (isPlainObject(obj)) {
    const k = typeof key === 'string' ? key : str(key);
    return Object.prototype.hasOwnProperty.call(obj, k) ? obj[k] : UNDEFINED;
  }
  if ((Array.isArray(obj) || typeof obj === 'string') && typeof key === 'number') {
    const i = key < 0 ? obj.length + key : key;
    return Number.isInteger(i) && i >= 0 && i < obj.length ? obj[i] : UNDEFINED;
  }
  return UNDEFINED;
}

// ---------------------------------------------------------------------------------------------
// Expression tokens and AST

interface ExprToken {
  readonly type: 'name' | 'string' | 'number' | 'op';
  readonly value: string;
}

type Expr =
  | { readonly k: 'lit'; readonly v: Value }
  | { readonly k: 'name'; readonly name: string }
  | { readonly k: 'attr'; readonly obj: Expr; readonly name: string }
  | { readonly k: 'item'; readonly obj: Expr; readonly key: Expr }
  | { readonly k: 'call'; readonly obj: Expr; readonly method: string; readonly args: Expr[] }
  | {
      readonly k: 'filter';
      readonly e: Expr;
      readonly name: string;
      readonly args: Expr[];
      readonly kwargs: Record<string, Expr>;
    }
  | {
      readonly k: 'test';
      readonly e: Expr;
      readonly name: string;
      readonly args: Expr[];
      readonly negate: boolean;
    }
  | { readonly k: 'not'; readonly e: Expr }
  | { readonly k: 'neg'; readonly e: Expr }
  | { readonly k: 'and' | 'or'; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'cmp'; readonly first: Expr; readonly rest: [string, Expr][] }
  | { readonly k: 'bin'; readonly op: string; readonly l: Expr; readonly r: Expr }
  | { readonly k: 'list'; readonly items: Expr[] }
  | { readonly k: 'dict'; readonly pairs: [Expr, Expr][] }
  | { readonly k: 'cond'; readonly test: Expr; readonly then: Expr; readonly else: Expr | null };

const OPS = ['//', '**', '==', '!=', '<=', '>=', '<', '>', '+', '-', '*', '/', '%', '~', '|'];
const PUNCT = ['.', '(', ')', '[', ']', '{', '}', ':', ',', '='];

function tokenizeExpr(src: string, where: string): ExprToken[] {
  const out: ExprToken[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (name !== null) {
      out.push({ type: 'name', value: name[0] });
      i += name[0].length;
      continue;
    }
    const number = /^[0-9][0-9_]*(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(src.slice(i));
    if (number !== null) {
      out.push({ type: 'number', value: number[0].replace(/_/g, '') });
      i += number[0].length;
      continue;
    }
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== ch) {
        if (src[j] === '\\' && j + 1 < src.length) {
          const esc = src[j + 1] as string;
          s += esc === 'n' ? '\n' : esc === 't' ? '\t' : esc === 'r' ? '\r' : esc;
          j += 2;
        } else s += src[j++];
      }
      if (j >= src.length) throw new TemplateError(`Unclosed string in ${where}.`);
      out.push({ type: 'string', value: s });
      i = j + 1;
      continue;
    }
    const op = [...OPS, ...PUNCT].find((o) => src.startsWith(o, i));
    if (op === undefined) throw new TemplateError(`Unexpected character '${ch}' in ${where}.`);
    out.push({ type: 'op', value: op });
    i += op.length;
  }
  return out;
}

const FILTERS = new Set(
  'join lower upper default d length count first last string trim capitalize title replace list sort unique reverse int float abs round tojson safe e escape'.split(
    ' ',
  ),
);

const TESTS = new Set(
  'defined undefined none boolean true false string number integer float mapping sequence iterable odd even divisibleby eq equalto ne in lower upper'.split(
    ' ',
  ),
);

const METHODS = new Set(
  'keys values items get lower upper strip split replace startswith endswith title capitalize'.split(
    ' ',
  ),
);

class ExprParser {
  private i = 0;

  constructor(
    private readonly tokens: readonly ExprToken[],
    private readonly where: string,
  ) {}

  get done(): boolean {
    return this.i >= this.tokens.length;
  }

  fail(reason: string): never {
    throw new TemplateError(`${reason} in ${this.where}.`);
  }

  peek(offset = 0): ExprToken | undefined {
    return this.tokens[this.i + offset];
  }

  isOp(value: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.type === 'op' && t.value === value;
  }

  /** Consumes the name `value` when it comes next. */
  accept(value: string): boolean {
    if (!this.isName(value)) return false;
    this.i++;
    return true;
  }

  isName(value: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.type === 'name' && t.value === value;
  }

  expectOp(value: string): void {
    if (!this.isOp(value)) this.fail(`Expected '${value}'${this.found()}`);
    this.i++;
  }

  name(): string {
    const t = this.peek();
    if (t?.type !== 'name') this.fail(`Expected a name${this.found()}`);
    this.i++;
    return t.value;
  }

  found(): string {
    const t = this.peek();
    return t === undefined ? ' but the expression ended' : ` but found '${t.value}'`;
  }

  end(): void {
    if (!this.done) this.fail(`Unexpected '${this.peek()?.value}'`);
  }

  expression(): Expr {
    const e = this.or();
    if (this.isName('if')) {
      this.i++;
      const test = this.or();
      let otherwise: Expr | null = null;
      if (this.isName('else')) {
        this.i++;
        otherwise = this.expression();
      }
      return { k: 'cond', test, then: e, else: otherwise };
    }
    return e;
  }

  /** An expression that stops before `if` (the iterable of a `for` with a filter). */
  or(): Expr {
    let l = this.and();
    while (this.isName('or')) {
      this.i++;
      l = { k: 'or', l, r: this.and() };
    }
    return l;
  }

  private and(): Expr {
    let l = this.not();
    while (this.isName('and')) {
      this.i++;
      l = { k: 'and', l, r: this.not() };
    }
    return l;
  }

  private not(): Expr {
    if (this.isName('not')) {
      this.i++;
      return { k: 'not', e: this.not() };
    }
    return this.compare();
  }

  private compare(): Expr {
    const first = this.concat();
    const rest: [string, Expr][] = [];
    for (;;) {
      const t = this.peek();
      if (t?.type === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(t.value)) {
        this.i++;
        rest.push([t.value, this.concat()]);
      } else if (this.isName('in')) {
        this.i++;
        rest.push(['in', this.concat()]);
      } else if (this.isName('not') && this.isName('in', 1)) {
        this.i += 2;
        rest.push(['not in', this.concat()]);
      } else break;
    }
    return rest.length === 0 ? first : { k: 'cmp', first, rest };
  }

  private concat(): Expr {
    let l = this.additive();
    while (this.isOp('~')) {
      this.i++;
      l = { k: 'bin', op: '~', l, r: this.additive() };
    }
    return l;
  }

  private additive(): Expr {
    let l = this.multiplicative();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.peek() as ExprToken).value;
      this.i++;
      l = { k: 'bin', op, l, r: this.multiplicative() };
    }
    return l;
  }

  private multiplicative(): Expr {
    let l = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const op = (this.peek() as ExprToken).value;
      this.i++;
      l = { k: 'bin', op, l, r: this.unary() };
    }
    return l;
  }

  /** Like Jinja: `-x|f` is `(-x)|f` — the operand of a sign takes no filters of its own. */
  private unary(withFilters = true): Expr {
    let node: Expr;
    if (this.isOp('-')) {
      this.i++;
      node = { k: 'neg', e: this.unary(false) };
    } else if (this.isOp('+')) {
      this.i++;
      node = this.unary(false);
    } else node = this.postfix(this.primary());
    return withFilters ? this.filters(node) : node;
  }

  private filters(e: Expr): Expr {
    let node = e;
    for (;;) {
      if (this.isOp('|')) {
        this.i++;
        const name = this.name();
        if (!FILTERS.has(name)) this.fail(`Unknown filter '${name}'`);
        const { args, kwargs } = this.isOp('(') ? this.callArgs() : { args: [], kwargs: {} };
        node = { k: 'filter', e: node, name, args, kwargs };
      } else if (this.isName('is')) {
        this.i++;
        let negate = false;
        if (this.isName('not')) {
          this.i++;
          negate = true;
        }
        const t = this.peek();
        let name: string;
        if (t?.type === 'op' && (t.value === '==' || t.value === '!=')) {
          this.i++;
          name = t.value === '==' ? 'eq' : 'ne';
        } else name = this.name();
        if (!TESTS.has(name)) this.fail(`Unknown test '${name}'`);
        let args: Expr[] = [];
        if (this.isOp('(')) args = this.callArgs().args;
        else if (['eq', 'ne', 'equalto', 'in', 'divisibleby'].includes(name)) {
          args = [this.postfix(this.primary())];
        }
        node = { k: 'test', e: node, name, args, negate };
      } else return node;
    }
  }

  private callArgs(): { args: Expr[]; kwargs: Record<string, Expr> } {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: Record<string, Expr> = {};
    while (!this.isOp(')')) {
      if (this.peek()?.type === 'name' && this.isOp('=', 1)) {
        const key = this.name();
        this.i++;
        kwargs[key] = this.expression();
      } else args.push(this.expression());
      if (!this.isOp(',')) break;
      this.i++;
    }
    this.expectOp(')');
    return { args, kwargs };
  }

  private postfix(e: Expr): Expr {
    let node = e;
    for (;;) {
      if (this.isOp('.')) {
        this.i++;
        const t = this.peek();
        if (t?.type === 'number') {
          this.i++;
          node = { k: 'item', obj: node, key: { k: 'lit', v: Number(t.value) } };
          continue;
        }
        const name = this.name();
        if (this.isOp('(')) {
          if (!METHODS.has(name)) this.fail(`Unknown method '${name}()'`);
          node = { k: 'call', obj: node, method: name, args: this.callArgs().args };
        } else node = { k: 'attr', obj: node, name };
      } else if (this.isOp('[')) {
        this.i++;
        const key = this.expression();
        this.expectOp(']');
        node = { k: 'item', obj: node, key };
      } else return node;
    }
  }

  private primary(): Expr {
    const t = this.peek();
    if (t === undefined) this.fail('Expected a value but the expression ended');
    this.i++;
    if (t.type === 'string') {
      let s = t.value;
      while (this.peek()?.type === 'string') s += (this.tokens[this.i++] as ExprToken).value;
      return { k: 'lit', v: s };
    }
    if (t.type === 'number') return { k: 'lit', v: Number(t.value) };
    if (t.type === 'name') {
      if (t.value === 'true' || t.value === 'True') return { k: 'lit', v: true };
      if (t.value === 'false' || t.value === 'False') return { k: 'lit', v: false };
      if (t.value === 'none' || t.value === 'None') return { k: 'lit', v: null };
      return { k: 'name', name: t.value };
    }
    if (t.value === '(') {
      const e = this.expression();
      if (this.isOp(',')) {
        const items = [e];
        while (this.isOp(',')) {
          this.i++;
          if (this.isOp(')')) break;
          items.push(this.expression());
        }
        this.expectOp(')');
        return { k: 'list', items };
      }
      this.expectOp(')');
      return e;
    }
    if (t.value === '[') {
      const items: Expr[] = [];
      while (!this.isOp(']')) {
        items.push(this.expression());
        if (!this.isOp(',')) break;
        this.i++;
      }
      this.expectOp(']');
      return { k: 'list', items };
    }
    if (t.value === '{') {
      const pairs: [Expr, Expr][] = [];
      while (!this.isOp('}')) {
        const key = this.expression();
        this.expectOp(':');
        pairs.push([key, this.expression()]);
        if (!this.isOp(',')) break;
        this.i++;
      }
      this.expectOp('}');
      return { k: 'dict', pairs };
    }
    return this.fail(`Unexpected '${t.value}'`);
  }
}

function parseExpression(src: string, where: string): Expr {
  const p = new ExprParser(tokenizeExpr(src, where), where);
  if (p.done) p.fail('Empty expression');
  const e = p.expression();
  p.end();
  return e;
}

// ---------------------------------------------------------------------------------------------
// Template structure

type TemplateNode =
  | { readonly t: 'text'; readonly s: string }
  | { readonly t: 'out'; readonly e: Expr }
  | {
      readonly t: 'if';
      readonly branches: { readonly test: Expr; readonly body: TemplateNode[] }[];
      readonly else: TemplateNode[];
    }
  | {
      readonly t: 'for';
      readonly targets: string[];
      readonly iter: Expr;
      readonly filter: Expr | null;
      readonly body: TemplateNode[];
      readonly else: TemplateNode[];
    }
  | { readonly t: 'set'; readonly target: string; readonly e: Expr };

interface Segment {
  readonly kind: 'text' | 'var' | 'block';
  text: string;
  readonly line: number;
}

/** Splits the source into text, `{{ }}` and `{% %}` segments, applying `-` whitespace control. */
function segment(source: string): Segment[] {
  const segments: Segment[] = [];
  let i = 0;
  let trimNext = false;
  const lineAt = (pos: number) => source.slice(0, pos).split('\n').length;
  while (i < source.length) {
    const open = source.slice(i).search(/\{[{%#]/);
    const start = open < 0 ? source.length : i + open;
    let text = source.slice(i, start);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (start >= source.length) {
      if (text) segments.push({ kind: 'text', text, line: lineAt(i) });
      break;
    }
    const kind = source[start + 1] as '{' | '%' | '#';
    const close = kind === '{' ? '}}' : kind === '%' ? '%}' : '#}';
    let j = start + 2;
    if (source[j] === '-') {
      text = text.replace(/\s+$/, '');
      j++;
    } else if (source[j] === '+') j++;
    if (text) segments.push({ kind: 'text', text, line: lineAt(i) });
    // Find the closing delimiter outside string literals.
    let end = -1;
    let quote: string | null = null;
    for (let k = j; k < source.length; k++) {
      const c = source[k];
      if (kind !== '#' && quote !== null) {
        if (c === '\\') k++;
        else if (c === quote) quote = null;
      } else if (kind !== '#' && (c === '"' || c === "'")) quote = c;
      else if (source.startsWith(close, k)) {
        end = k;
        break;
      }
    }
    if (end < 0) {
      throw new TemplateError(`Unclosed '{${kind}' opened at line ${lineAt(start)}.`);
    }
    let inner = source.slice(j, end);
    if (inner.endsWith('-')) {
      inner = inner.slice(0, -1);
      trimNext = true;
    } else if (inner.endsWith('+')) inner = inner.slice(0, -1);
    if (kind !== '#') {
      segments.push({ kind: kind === '{' ? 'var' : 'block', text: inner, line: lineAt(start) });
    }
    i = end + 2;
  }
  return segments;
}

class TemplateParser {
  private i = 0;

  constructor(private readonly segments: readonly Segment[]) {}

  parse(): TemplateNode[] {
    const { nodes, end } = this.body([]);
    if (end !== null) {
      throw new TemplateError(`Unexpected '{% ${end.word} %}' at line ${end.line}.`);
    }
    return nodes;
  }

  /** Parses nodes until one of `stops` (returned with the rest of its tag) or the end. */
  private body(stops: readonly string[]): {
    nodes: TemplateNode[];
    end: { word: string; rest: string; line: number } | null;
  } {
    const nodes: TemplateNode[] = [];
    while (this.i < this.segments.length) {
      const seg = this.segments[this.i++] as Segment;
      if (seg.kind === 'text') {
        nodes.push({ t: 'text', s: seg.text });
        continue;
      }
      const where = `the template at line ${seg.line}`;
      if (seg.kind === 'var') {
        nodes.push({ t: 'out', e: parseExpression(seg.text, where) });
        continue;
      }
      const m = /^\s*([A-Za-z_]+)\b([\s\S]*)$/.exec(seg.text);
      if (m === null) throw new TemplateError(`Empty or malformed tag in ${where}.`);
      const word = m[1] as string;
      const rest = (m[2] as string).trim();
      if (stops.includes(word)) return { nodes, end: { word, rest, line: seg.line } };
      if (word === 'if') nodes.push(this.ifNode(rest, seg.line));
      else if (word === 'for') nodes.push(this.forNode(rest, seg.line));
      else if (word === 'set') {
        const set = /^([A-Za-z_][A-Za-z0-9_]*)\s*=([\s\S]+)$/.exec(rest);
        if (set === null) throw new TemplateError(`Malformed 'set' tag in ${where}.`);
        nodes.push({
          t: 'set',
          target: set[1] as string,
          e: parseExpression(set[2] as string, where),
        });
      } else if (['elif', 'else', 'endif', 'endfor'].includes(word)) {
        throw new TemplateError(`Unexpected '{% ${word} %}' at line ${seg.line}.`);
      } else throw new TemplateError(`Unknown tag '${word}' in ${where}.`);
    }
    if (stops.length > 0) {
      throw new TemplateError(`Missing '{% ${stops[stops.length - 1]} %}': the template ended.`);
    }
    return { nodes, end: null };
  }

  private ifNode(test: string, line: number): TemplateNode {
    const branches: { test: Expr; body: TemplateNode[] }[] = [];
    let cond = parseExpression(test, `the 'if' at line ${line}`);
    let otherwise: TemplateNode[] = [];
    for (;;) {
      const { nodes, end } = this.body(['elif', 'else', 'endif']);
      branches.push({ test: cond, body: nodes });
      if (end === null || end.word === 'endif') break;
      if (end.word === 'elif') {
        cond = parseExpression(end.rest, `the 'elif' at line ${end.line}`);
        continue;
      }
      const tail = this.body(['endif']);
      otherwise = tail.nodes;
      break;
    }
    return { t: 'if', branches, else: otherwise };
  }

  private forNode(spec: string, line: number): TemplateNode {
    const where = `the 'for' at line ${line}`;
    const m = /^([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)\s+in\s+([\s\S]+)$/.exec(
      spec,
    );
    if (m === null) throw new TemplateError(`Malformed ${where}: expected 'for x in items'.`);
    const targets = (m[1] as string).split(',').map((s) => s.trim());
    const p = new ExprParser(tokenizeExpr(m[2] as string, where), where);
    const iter = p.or();
    let filter: Expr | null = null;
    if (p.accept('if')) filter = p.expression();
    p.end();
    const first = this.body(['else', 'endfor']);
    let otherwise: TemplateNode[] = [];
    if (first.end?.word === 'else') otherwise = this.body(['endfor']).nodes;
    return { t: 'for', targets, iter, filter, body: first.nodes, else: otherwise };
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering

type Scope = Map<string, Value>[];

function resolveName(scope: Scope, name: string): Value {
  for (let i = scope.length - 1; i >= 0; i--) {
    const frame = scope[i] as Map<string, Value>;
    if (frame.has(name)) return frame.get(name);
  }
  return UNDEFINED;
}

function arith(op: string, a: Value, b: Value): Value {
  if (op === '~') return str(a) + str(b);
  if (op === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
  if (op === '+' && Array.isArray(a) && Array.isArray(b)) {
    return [...(a as unknown[]), ...(b as unknown[])];
  }
  if (op === '*' && typeof a === 'string' && typeof b === 'number') return a.repeat(Math.max(0, b));
  if (!isNumeric(a) || !isNumeric(b)) {
    throw new TemplateError(`Unsupported operand types for ${op}: ${pyRepr(a)} and ${pyRepr(b)}.`);
  }
  const x = Number(a);
  const y = Number(b);
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      if (y === 0) throw new TemplateError('Division by zero.');
      return x / y;
    case '//':
      if (y === 0) throw new TemplateError('Division by zero.');
      return Math.floor(x / y);
    case '%':
      if (y === 0) throw new TemplateError('Division by zero.');
      return ((x % y) + y) % y;
    default:
      throw new TemplateError(`Unsupported operator ${op}.`);
  }
}

function contains(container: Value, item: Value): boolean {
  if (isUndefined(container)) return false;
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (Array.isArray(container)) return container.some((x) => equals(x, item));
  if (isPlainObject(container)) {
    return typeof item === 'string' && Object.prototype.hasOwnProperty.call(container, item);
  }
  throw new TemplateError(`Cannot test membership in ${pyRepr(container)}.`);
}

function compare(op: string, a: Value, b: Value): boolean {
  switch (op) {
    case '==':
      return equals(a, b);
    case '!=':
      return !equals(a, b);
    case 'in':
      return contains(b, a);
    case 'not in':
      return !contains(b, a);
  }
  if (isUndefined(a) || isUndefined(b)) throw new TemplateError('Cannot order an undefined value.');
  let c: number;
  try {
    c = pyCompare(a, b);
  } catch (e) {
    if (e instanceof PythonTypeError) throw new TemplateError(e.message);
    throw e;
  }
  return op === '<' ? c < 0 : op === '>' ? c > 0 : op === '<=' ? c <= 0 : c >= 0;
}

function callMethod(obj: Value, method: string, args: Value[]): Value {
  if (isPlainObject(obj)) {
    if (method === 'keys') return Object.keys(obj);
    if (method === 'values') return Object.values(obj);
    if (method === 'items') return Object.entries(obj);
    if (method === 'get') {
      const v = lookup(obj, args[0]);
      return isUndefined(v) ? (args[1] ?? null) : v;
    }
  }
  if (typeof obj === 'string') {
    const a0 = args[0];
    switch (method) {
      case 'lower':
        return obj.toLowerCase();
      case 'upper':
        return obj.toUpperCase();
      case 'strip':
        return typeof a0 === 'string' ? stripChars(obj, a0) : obj.trim();
      case 'title':
        return titleCase(obj);
      case 'capitalize':
        return capitalize(obj);
      case 'split':
        return typeof a0 === 'string' ? obj.split(a0) : obj.split(/\s+/).filter((s) => s);
      case 'replace':
        return obj.split(str(a0)).join(str(args[1]));
      case 'startswith':
        return obj.startsWith(str(a0));
      case 'endswith':
        return obj.endsWith(str(a0));
    }
  }
  if (isUndefined(obj)) {
    throw new TemplateError(`Cannot call '${method}()' on an undefined value.`);
  }
  throw new TemplateError(`${pyRepr(obj)} has no method '${method}()'.`);
}

function stripChars(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a] as string)) a++;
  while (b > a && chars.includes(s[b - 1] as string)) b--;
  return s.slice(a, b);
}

function capitalize(s: string): string {
  return s.length === 0 ? s : (s[0] as string).toUpperCase() + s.slice(1).toLowerCase();
}

function titleCase(s: string): string {
  return s
    .toLowerCase()
    .replace(/(^|[^\p{L}\p{N}])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase());
}

function htmlEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');
}

function length(v: Value): number {
  if (isUndefined(v)) return 0;
  if (typeof v === 'string' || Array.isArray(v)) return v.length;
  if (isPlainObject(v)) return Object.keys(v).length;
  throw new TemplateError(`${pyRepr(v)} has no length.`);
}

function applyFilter(name: string, v: Value, args: Value[], kwargs: Record<string, Value>): Value {
  const a0 = args[0];
  switch (name) {
    case 'join': {
      const sep = a0 === undefined || isUndefined(a0) ? (kwargs.d ?? '') : a0;
      const attribute = args[1] ?? kwargs.attribute;
      const items = iterate(v, 'join').map((x) =>
        attribute === undefined ? x : lookup(x, attribute),
      );
      return items.map(str).join(str(sep));
    }
    case 'lower':
      return str(v).toLowerCase();
    case 'upper':
      return str(v).toUpperCase();
    case 'default':
    case 'd': {
      const boolean = truthy(args[1] ?? kwargs.boolean ?? false);
      const fallback = a0 === undefined ? (kwargs.default_value ?? '') : a0;
      return isUndefined(v) || (boolean && !truthy(v)) ? fallback : v;
    }
    case 'length':
    case 'count':
      return length(v);
    case 'first':
      return iterate(v, 'first')[0] ?? UNDEFINED;
    case 'last': {
      const items = iterate(v, 'last');
      return items.length === 0 ? UNDEFINED : items[items.length - 1];
    }
    case 'string':
      return str(v);
    case 'trim':
      return typeof a0 === 'string' ? stripChars(str(v), a0) : str(v).trim();
    case 'capitalize':
      return capitalize(str(v));
    case 'title':
      return titleCase(str(v));
    case 'replace':
      return str(v).split(str(a0)).join(str(args[1]));
    case 'list':
      return [...iterate(v, 'list')];
    case 'sort': {
      const reverse = truthy(a0 ?? kwargs.reverse ?? false);
      const sorted = [...iterate(v, 'sort')].sort((x, y) => pyCompare(x, y));
      return reverse ? sorted.reverse() : sorted;
    }
    case 'unique': {
      const out: Value[] = [];
      for (const x of iterate(v, 'unique')) if (!out.some((y) => equals(x, y))) out.push(x);
      return out;
    }
    case 'reverse':
      return typeof v === 'string'
        ? [...v].reverse().join('')
        : [...iterate(v, 'reverse')].reverse();
    case 'int': {
      const n = typeof v === 'string' ? Number.parseInt(v, 10) : Number(v);
      return Number.isFinite(n) ? Math.trunc(n) : (a0 ?? 0);
    }
    case 'float': {
      const n = typeof v === 'string' ? Number.parseFloat(v) : Number(v);
      return Number.isFinite(n) ? n : (a0 ?? 0);
    }
    case 'abs':
      return Math.abs(Number(v));
    case 'round': {
      const digits = typeof a0 === 'number' ? a0 : 0;
      const f = 10 ** digits;
      return Math.round(Number(v) * f) / f;
    }
    case 'tojson':
      return JSON.stringify(isUndefined(v) ? null : v);
    case 'safe':
      return v;
    case 'e':
    case 'escape':
      return htmlEscape(str(v));
    default:
      throw new TemplateError(`Unknown filter '${name}'.`);
  }
}

function applyTest(name: string, v: Value, args: Value[]): boolean {
  const a0 = args[0];
  switch (name) {
    case 'defined':
      return !isUndefined(v);
    case 'undefined':
      return isUndefined(v);
    case 'none':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'true':
      return v === true;
    case 'false':
      return v === false;
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'float':
      return typeof v === 'number' && !Number.isInteger(v);
    case 'mapping':
      return isPlainObject(v);
    case 'sequence':
    case 'iterable':
      return typeof v === 'string' || Array.isArray(v) || isPlainObject(v);
    case 'odd':
      return typeof v === 'number' && Math.abs(v % 2) === 1;
    case 'even':
      return typeof v === 'number' && v % 2 === 0;
    case 'divisibleby':
      return typeof v === 'number' && typeof a0 === 'number' && a0 !== 0 && v % a0 === 0;
    case 'eq':
    case 'equalto':
      return equals(v, a0);
    case 'ne':
      return !equals(v, a0);
    case 'in':
      return contains(a0, v);
    case 'lower':
      return typeof v === 'string' && v === v.toLowerCase();
    case 'upper':
      return typeof v === 'string' && v === v.toUpperCase();
    default:
      throw new TemplateError(`Unknown test '${name}'.`);
  }
}

function evaluate(e: Expr, scope: Scope): Value {
  switch (e.k) {
    case 'lit':
      return e.v;
    case 'name':
      return resolveName(scope, e.name);
    case 'attr':
      return lookup(evaluate(e.obj, scope), e.name);
    case 'item':
      return lookup(evaluate(e.obj, scope), evaluate(e.key, scope));
    case 'call':
      return callMethod(
        evaluate(e.obj, scope),
        e.method,
        e.args.map((a) => evaluate(a, scope)),
      );
    case 'filter': {
      const kwargs: Record<string, Value> = {};
      for (const [k, v] of Object.entries(e.kwargs)) kwargs[k] = evaluate(v, scope);
      return applyFilter(
        e.name,
        evaluate(e.e, scope),
        e.args.map((a) => evaluate(a, scope)),
        kwargs,
      );
    }
    case 'test': {
      const r = applyTest(
        e.name,
        evaluate(e.e, scope),
        e.args.map((a) => evaluate(a, scope)),
      );
      return e.negate ? !r : r;
    }
    case 'not':
      return !truthy(evaluate(e.e, scope));
    case 'neg':
      return arith('-', 0, evaluate(e.e, scope));
    case 'and': {
      const l = evaluate(e.l, scope);
      return truthy(l) ? evaluate(e.r, scope) : l;
    }
    case 'or': {
      const l = evaluate(e.l, scope);
      return truthy(l) ? l : evaluate(e.r, scope);
    }
    case 'cmp': {
      let left = evaluate(e.first, scope);
      for (const [op, expr] of e.rest) {
        const right = evaluate(expr, scope);
        if (!compare(op, left, right)) return false;
        left = right;
      }
      return true;
    }
    case 'bin':
      return arith(e.op, evaluate(e.l, scope), evaluate(e.r, scope));
    case 'list':
      return e.items.map((x) => evaluate(x, scope));
    case 'dict': {
      const out: Record<string, Value> = {};
      for (const [k, v] of e.pairs) out[str(evaluate(k, scope))] = evaluate(v, scope);
      return out;
    }
    case 'cond':
      if (truthy(evaluate(e.test, scope))) return evaluate(e.then, scope);
      return e.else === null ? UNDEFINED : evaluate(e.else, scope);
  }
}

function renderNodes(nodes: readonly TemplateNode[], scope: Scope, out: string[]): void {
  for (const node of nodes) {
    switch (node.t) {
      case 'text':
        out.push(node.s);
        break;
      case 'out':
        out.push(str(evaluate(node.e, scope)));
        break;
      case 'set':
        (scope[scope.length - 1] as Map<string, Value>).set(node.target, evaluate(node.e, scope));
        break;
      case 'if': {
        const branch = node.branches.find((b) => truthy(evaluate(b.test, scope)));
        renderNodes(branch === undefined ? node.else : branch.body, scope, out);
        break;
      }
      case 'for': {
        const all = iterate(evaluate(node.iter, scope), 'for');
        const items: Value[] = [];
        for (const item of all) {
          if (node.filter === null) {
            items.push(item);
            continue;
          }
          const probe = new Map<string, Value>();
          bindTargets(probe, node.targets, item);
          if (truthy(evaluate(node.filter, [...scope, probe]))) items.push(item);
        }
        if (items.length === 0) {
          renderNodes(node.else, scope, out);
          break;
        }
        items.forEach((item, index) => {
          const frame = new Map<string, Value>();
          bindTargets(frame, node.targets, item);
          frame.set('loop', {
            index: index + 1,
            index0: index,
            revindex: items.length - index,
            revindex0: items.length - index - 1,
            first: index === 0,
            last: index === items.length - 1,
            length: items.length,
            previtem: index > 0 ? items[index - 1] : UNDEFINED,
            nextitem: index < items.length - 1 ? items[index + 1] : UNDEFINED,
          });
          renderNodes(node.body, [...scope, frame], out);
        });
        break;
      }
    }
  }
}

function bindTargets(frame: Map<string, Value>, targets: readonly string[], item: Value): void {
  if (targets.length === 1) {
    frame.set(targets[0] as string, item);
    return;
  }
  const parts = iterate(item, 'unpacking');
  if (parts.length !== targets.length) {
    throw new TemplateError(`Cannot unpack ${pyRepr(item)} into ${targets.join(', ')}.`);
  }
  targets.forEach((t, i) => frame.set(t, parts[i]));
}

const CACHE_LIMIT = 256;
const cache = new Map<string, TemplateNode[] | TemplateError>();

function compile(template: string): TemplateNode[] {
  let entry = cache.get(template);
  if (entry === undefined) {
    // Like jinja2's default `keep_trailing_newline=False`.
    const source = template.endsWith('\n') ? template.slice(0, -1) : template;
    try {
      entry = new TemplateParser(segment(source)).parse();
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      entry = e;
    }
    if (cache.size >= CACHE_LIMIT) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(template, entry);
  }
  if (entry instanceof TemplateError) throw entry;
  return entry;
}

/**
 * Renders a Jinja template with `variables`. Throws `TemplateError` for a malformed template or
 * an expression that cannot be evaluated (e.g. an unknown filter, `1 < 'a'`).
 */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  if (!/\{[{%#]/.test(template)) {
    return template.endsWith('\n') ? template.slice(0, -1) : template;
  }
  const nodes = compile(template);
  const out: string[] = [];
  const globals = new Map<string, Value>(Object.entries(variables));
  renderNodes(nodes, [globals, new Map<string, Value>()], out);
  return out.join('');
}

/** Whether the text contains Jinja markup (`{{`, `{%` or `{#`). */
export function isTemplate(text: string): boolean {
  return /\{[{%#]/.test(text);
}
