import { DialogueError, type DialogueErrorCode } from 'src/core/errors/dialogue-error';
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  Scalar,
  visit,
  type Document,
  type Node,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';

/** Upper bound of a training-data / config file (bytes of UTF-16 text, roughly). */
export const DEFAULT_MAX_YAML_CHARS = 20 * 1024 * 1024;
/** Alias expansion cap: stops "billion laughs" documents. */
export const MAX_YAML_ALIASES = 50;
/**
 * Deepest nesting of collections a YAML text may have (flow `[`/`{` and block indentation
 * levels). Rasa's training files nest 4–5 levels; the `yaml` library, and every walk over the
 * result, would otherwise recurse once per level of a hostile `[[[[…` document.
 */
export const MAX_YAML_DEPTH = 64;

/** A UTF-16 code unit a one-byte V8 string cannot hold (above U+00FF). */
const WIDE_CHAR = /[\u0100-\uffff]/;

/**
 * `value` as a string V8 stores with one byte per character, when it can. The `yaml` parser
 * cuts its strings out of the text, and V8 keeps a cut of a two-byte text two-byte even when
 * it is plain ASCII: one typographic apostrophe or emoji anywhere in a domain file would make
 * every action name, response and slot name read from it two-byte — and with them every event
 * JSON and SQL parameter built from those names on every turn, twice the bytes, with slower
 * JSON and UTF-8 encoding. JSON.parse builds one-byte strings where the characters allow.
 */
export function compactString(value: string): string {
  return WIDE_CHAR.test(value) ? value : (JSON.parse(JSON.stringify(value)) as string);
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const BACKSLASH = 0x5c;

/**
 * Whether YAML text nests collections deeper than `max`, found in one pass over the text before
 * the parser builds anything: flow collections (`[`, `{` that open a value, and any inside a
 * flow collection, quoted strings and comments skipped) plus the block indentation levels and
 * compact `- `/`? ` entries of the line they are on. An estimate that errs on the side of
 * depth only for documents no training file resembles.
 */
export function yamlDeeperThan(text: string, max: number): boolean {
  const indents: number[] = [];
  let flow = 0;
  let quote = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Start of a line.
    let blockLevels = indents.length;
    if (quote === 0 && flow === 0) {
      let col = 0;
      while (i < n && text.charCodeAt(i) === SPACE) {
        i++;
        col++;
      }
      const first = text.charCodeAt(i);
      if (i < n && first !== LF && first !== CR && first !== HASH) {
        while (indents.length > 0 && indents[indents.length - 1]! > col) indents.pop();
        if (indents.length === 0 || indents[indents.length - 1]! < col) indents.push(col);
        blockLevels = indents.length;
        if (blockLevels > max) return true;
      }
    }
    let prev = 0; // last non-space character on this line (0: none yet)
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === LF) {
        i++;
        break;
      }
      if (quote === DQUOTE) {
        if (c === BACKSLASH) i++;
        else if (c === DQUOTE) quote = 0;
        continue;
      }
      if (quote === SQUOTE) {
        if (c === SQUOTE) {
          if (text.charCodeAt(i + 1) === SQUOTE) i++;
          else quote = 0;
        }
        continue;
      }
      if (c === SPACE || c === TAB || c === CR) continue;
      const valueStart =
        prev === 0 || prev === 0x2d || prev === 0x3a || prev === 0x3f || prev === 0x2c;
      if (c === HASH && (prev === 0 || isBlank(text.charCodeAt(i - 1)))) {
        while (i < n && text.charCodeAt(i) !== LF) i++;
        i++;
        break;
      }
      if ((c === 0x2d || c === 0x3f) && flow === 0 && isBlank(text.charCodeAt(i + 1))) {
        // A compact block entry ("- - x", "- ? x") nests one level more on this line.
        if (prev === 0 || prev === 0x2d || prev === 0x3f) {
          if (++blockLevels > max) return true;
        }
      } else if ((c === 0x5b || c === 0x7b) && (flow > 0 || valueStart)) {
        if (++flow + blockLevels > max) return true;
      } else if ((c === 0x5d || c === 0x7d) && flow > 0) {
        flow--;
      } else if ((c === DQUOTE || c === SQUOTE) && valueStart) {
        quote = c;
      }
      prev = c;
    }
  }
  return false;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB || c === LF || c === CR || Number.isNaN(c);
}

/** A parsed YAML file that still knows where each node came from. */
export interface YamlSource {
  readonly file: string;
  readonly doc: Document.Parsed;
  readonly lines: LineCounter;
  readonly code: DialogueErrorCode;
}

export interface YamlParseOptions {
  readonly maxChars?: number;
  /** Error code for every problem found in this file (default `TRAINING_DATA.INVALID`). */
  readonly code?: DialogueErrorCode;
}

/** Throws a DialogueError naming file, line and problem. */
export function yamlError(
  source: Pick<YamlSource, 'file' | 'code'>,
  line: number | undefined,
  problem: string,
): never {
  const where = line === undefined ? source.file : `${source.file}:${line}`;
  throw new DialogueError(source.code, `${where}: ${problem}`, {
    file: source.file,
    ...(line === undefined ? {} : { line }),
    problem,
  });
}

/**
 * Parses YAML with the safety limits of the project: size cap, few aliases, duplicate keys
 * rejected, YAML 1.2 core schema (no custom tags). Syntax errors name the line.
 */
export function parseYamlSource(
  text: string,
  file: string,
  options: YamlParseOptions = {},
): YamlSource {
  const code = options.code ?? 'TRAINING_DATA.INVALID';
  const maxChars = options.maxChars ?? DEFAULT_MAX_YAML_CHARS;
  if (text.length > maxChars) {
    yamlError({ file, code }, undefined, `file is larger than the limit of ${maxChars} characters`);
  }
  checkYamlDepth(text, file, code);
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
    schema: 'core',
    strict: true,
  });
  const first = doc.errors[0];
  if (first) {
    const line = lines.linePos(first.pos[0]).line;
    yamlError({ file, code }, line, `invalid YAML: ${first.message.split('\n')[0] ?? ''}`);
  }
  const source: YamlSource = { file, doc, lines, code };
  // One walk: YAML 1.1 merge keys (`<<: *anchor`) are refused — the core schema would keep `<<`
  // as an ordinary key and the data would silently mean something else than its author
  // thought — and, in a text with characters above U+00FF, string scalars are compacted.
  const compact = WIDE_CHAR.test(text);
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.type === Scalar.PLAIN && pair.key.value === '<<') {
        yamlError(
          source,
          lineOf(source, pair.key),
          'invalid YAML: merge keys (<<) are not supported; write the keys out',
        );
      }
    },
    Scalar(_, node) {
      if (compact && typeof node.value === 'string') node.value = compactString(node.value);
    },
  });
  // Resolve aliases once with a cap so later toJS() calls cannot explode.
  try {
    doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    yamlError(source, undefined, `invalid YAML: ${(error as Error).message}`);
  }
  return source;
}

/** Throws a DialogueError when the text nests deeper than {@link MAX_YAML_DEPTH}. */
export function checkYamlDepth(
  text: string,
  file: string,
  code: DialogueErrorCode = 'TRAINING_DATA.INVALID',
): void {
  if (yamlDeeperThan(text, MAX_YAML_DEPTH)) {
    yamlError(
      { file, code },
      undefined,
      `the YAML nests collections deeper than the limit of ${MAX_YAML_DEPTH} levels`,
    );
  }
}

/** 1-based line of a node (its first character), if known. */
export function lineOf(source: YamlSource, node: Node | null | undefined): number | undefined {
  const range = node?.range;
  if (!range) return undefined;
  return source.lines.linePos(range[0]).line;
}

/** Follows an alias to the node it names (aliases were already counted at parse time). */
export function deref(source: YamlSource, node: unknown): unknown {
  return isAlias(node) ? node.resolve(source.doc) : node;
}

export function asMap(source: YamlSource, raw: unknown, what: string, line?: number): YAMLMap {
  const node = deref(source, raw);
  if (isMap(node)) return node;
  yamlError(source, lineOfUnknown(source, node) ?? line, `${what} must be a mapping`);
}

export function asSeq(source: YamlSource, raw: unknown, what: string, line?: number): YAMLSeq {
  const node = deref(source, raw);
  if (isSeq(node)) return node;
  yamlError(source, lineOfUnknown(source, node) ?? line, `${what} must be a list`);
}

function lineOfUnknown(source: YamlSource, node: unknown): number | undefined {
  return isMap(node) || isSeq(node) || isScalar(node) ? lineOf(source, node) : undefined;
}

export interface MapEntry {
  readonly key: string;
  readonly keyLine: number | undefined;
  readonly value: unknown;
}

/** Entries of a mapping with string keys (non-string keys are an error). */
export function entriesOf(source: YamlSource, map: YAMLMap): MapEntry[] {
  return map.items.map((pair) => {
    const keyNode = pair.key;
    if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
      yamlError(
        source,
        lineOfUnknown(source, keyNode) ?? lineOf(source, map),
        'keys must be strings',
      );
    }
    return { key: keyNode.value, keyLine: lineOf(source, keyNode), value: pair.value };
  });
}

/** A scalar's value as a string (numbers and booleans are stringified as Rasa would). */
export function scalarString(
  source: YamlSource,
  raw: unknown,
  what: string,
  line?: number,
): string {
  const node = deref(source, raw);
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  }
  yamlError(source, lineOfUnknown(source, node) ?? line, `${what} must be a string`);
}

/** Plain JS value of a node (aliases capped). */
export function toPlain(source: YamlSource, node: unknown): unknown {
  if (isMap(node) || isSeq(node) || isScalar(node) || isAlias(node)) {
    return node.toJS(source.doc, { maxAliasCount: MAX_YAML_ALIASES }) as unknown;
  }
  return node ?? null;
}
