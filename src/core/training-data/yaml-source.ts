import { DialogueError, type DialogueErrorCode } from 'src/core/errors/dialogue-error';
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Document,
  type Node,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';

/** Upper bound of a training-data / config file (bytes of UTF-16 text, roughly). */
export const DEFAULT_MAX_YAML_CHARS = 20 * 1024 * 1024;
/** Alias expansion cap: stops "billion laughs" documents. */
export const MAX_YAML_ALIASES = 50;

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
  // Resolve aliases once with a cap so later toJS() calls cannot explode.
  try {
    doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    yamlError(source, undefined, `invalid YAML: ${(error as Error).message}`);
  }
  return source;
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
