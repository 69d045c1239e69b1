/**
 * The subset of RFC 8941 structured fields that HTTP message signatures use: dictionaries whose
 * members are items or inner lists, with parameters; bare items integer, decimal, string, token,
 * byte sequence and boolean. Parsing is strict: anything malformed throws.
 */
export type BareItem =
  | { readonly kind: 'integer'; readonly value: number }
  | { readonly kind: 'decimal'; readonly value: number }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'token'; readonly value: string }
  | { readonly kind: 'bytes'; readonly value: Buffer }
  | { readonly kind: 'boolean'; readonly value: boolean };

export type Parameters = ReadonlyArray<readonly [string, BareItem]>;
export interface Item {
  readonly type: 'item';
  readonly value: BareItem;
  readonly params: Parameters;
}
export interface InnerList {
  readonly type: 'inner-list';
  readonly items: readonly Item[];
  readonly params: Parameters;
}
export type Member = Item | InnerList;

export class StructuredFieldError extends Error {}

class Parser {
  private pos = 0;
  constructor(private readonly input: string) {}

  fail(what: string): never {
    throw new StructuredFieldError(`${what} at position ${this.pos}`);
  }
  peek(): string {
    return this.input[this.pos] ?? '';
  }
  eof(): boolean {
    return this.pos >= this.input.length;
  }
  skipSp(): void {
    while (this.peek() === ' ') this.pos++;
  }
  skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }

  dictionary(): Map<string, Member> {
    const dict = new Map<string, Member>();
    this.skipSp();
    if (this.eof()) return dict;
    for (;;) {
      const key = this.key();
      let member: Member;
      if (this.peek() === '=') {
        this.pos++;
        member = this.member();
      } else {
        member = { type: 'item', value: { kind: 'boolean', value: true }, params: this.params() };
      }
      dict.delete(key);
      dict.set(key, member);
      this.skipOws();
      if (this.eof()) return dict;
      if (this.peek() !== ',') this.fail('expected ","');
      this.pos++;
      this.skipOws();
      if (this.eof()) this.fail('trailing ","');
    }
  }

  member(): Member {
    if (this.peek() === '(') return this.innerList();
    return this.item();
  }

  innerList(): InnerList {
    this.pos++;
    const items: Item[] = [];
    for (;;) {
      this.skipSp();
      if (this.peek() === ')') {
        this.pos++;
        return { type: 'inner-list', items, params: this.params() };
      }
      items.push(this.item());
      const c = this.peek();
      if (c !== ' ' && c !== ')') this.fail('expected " " or ")" in inner list');
    }
  }

  item(): Item {
    const value = this.bareItem();
    return { type: 'item', value, params: this.params() };
  }

  params(): Parameters {
    const params: Array<readonly [string, BareItem]> = [];
    while (this.peek() === ';') {
      this.pos++;
      this.skipSp();
      const key = this.key();
      let value: BareItem = { kind: 'boolean', value: true };
      if (this.peek() === '=') {
        this.pos++;
        value = this.bareItem();
      }
      const existing = params.findIndex(([k]) => k === key);
      if (existing >= 0) params.splice(existing, 1);
      params.push([key, value]);
    }
    return params;
  }

  key(): string {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(this.input.slice(this.pos));
    if (!match) this.fail('expected a key');
    this.pos += match[0].length;
    return match[0];
  }

  bareItem(): BareItem {
    const c = this.peek();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === '"') return this.string();
    if (c === ':') return this.bytes();
    if (c === '?') return this.boolean();
    if (/[A-Za-z*]/.test(c)) return this.token();
    return this.fail('expected an item');
  }

  number(): BareItem {
    const match = /^-?\d{1,15}(\.\d{1,3})?/.exec(this.input.slice(this.pos));
    if (!match) this.fail('bad number');
    const text = match[0];
    if (match[1] === undefined && text.replace('-', '').length > 15) this.fail('integer too long');
    if (match[1] !== undefined && text.replace('-', '').split('.')[0]!.length > 12) {
      this.fail('decimal too long');
    }
    this.pos += text.length;
    return match[1] === undefined
      ? { kind: 'integer', value: Number.parseInt(text, 10) }
      : { kind: 'decimal', value: Number.parseFloat(text) };
  }

  string(): BareItem {
    this.pos++;
    let out = '';
    for (;;) {
      if (this.eof()) this.fail('unterminated string');
      const c = this.input[this.pos++] ?? '';
      if (c === '\\') {
        const next = this.input[this.pos++] ?? '';
        if (next !== '"' && next !== '\\') this.fail('bad escape');
        out += next;
      } else if (c === '"') {
        return { kind: 'string', value: out };
      } else {
        const code = c.charCodeAt(0);
        if (code < 0x20 || code > 0x7e) this.fail('bad string character');
        out += c;
      }
    }
  }

  token(): BareItem {
    const match = /^[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/.exec(this.input.slice(this.pos));
    if (!match) this.fail('bad token');
    this.pos += match[0].length;
    return { kind: 'token', value: match[0] };
  }

  bytes(): BareItem {
    const end = this.input.indexOf(':', this.pos + 1);
    if (end < 0) this.fail('unterminated byte sequence');
    const b64 = this.input.slice(this.pos + 1, end);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) this.fail('bad byte sequence');
    const value = Buffer.from(b64, 'base64');
    if (value.toString('base64') !== b64) this.fail('non-canonical byte sequence');
    this.pos = end + 1;
    return { kind: 'bytes', value };
  }

  boolean(): BareItem {
    const text = this.input.slice(this.pos, this.pos + 2);
    if (text !== '?0' && text !== '?1') this.fail('bad boolean');
    this.pos += 2;
    return { kind: 'boolean', value: text === '?1' };
  }
}

/** Parses an RFC 8941 dictionary header value. */
export function parseDictionary(value: string): Map<string, Member> {
  const parser = new Parser(value.trim());
  return parser.dictionary();
}

export function serializeBareItem(item: BareItem): string {
  switch (item.kind) {
    case 'integer':
      return String(item.value);
    case 'decimal':
      return Number.isInteger(item.value) ? `${item.value}.0` : String(item.value);
    case 'string':
      return `"${item.value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    case 'token':
      return item.value;
    case 'bytes':
      return `:${item.value.toString('base64')}:`;
    case 'boolean':
      return item.value ? '?1' : '?0';
  }
}

export function serializeParams(params: Parameters): string {
  return params
    .map(([key, value]) =>
      value.kind === 'boolean' && value.value ? `;${key}` : `;${key}=${serializeBareItem(value)}`,
    )
    .join('');
}

/** Canonical serialization of an inner list with its parameters. */
export function serializeInnerList(list: InnerList): string {
  const items = list.items.map((i) => serializeBareItem(i.value) + serializeParams(i.params));
  return `(${items.join(' ')})${serializeParams(list.params)}`;
}
