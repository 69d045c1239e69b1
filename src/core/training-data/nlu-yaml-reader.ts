import { compilePythonRegex } from 'src/core/nlu/python-regex';
import {
  EntityAnnotationError,
  parseAnnotatedText,
} from 'src/core/training-data/entity-annotation-parser';
import {
  type LookupTable,
  type NluExample,
  type NluTrainingData,
  type RegexFeature,
  type ResponseVariation,
} from 'src/core/training-data/nlu-training-data';
import {
  asMap,
  asSeq,
  deref,
  entriesOf,
  lineOf,
  parseYamlSource,
  scalarString,
  toPlain,
  yamlError,
  type YamlParseOptions,
  type YamlSource,
} from 'src/core/training-data/yaml-source';
import { isMap, isScalar, Scalar, type YAMLMap } from 'yaml';

export interface NluYamlReadResult {
  readonly data: NluTrainingData;
  /** Non-fatal problems Rasa would log as warnings (file:line: message). */
  readonly warnings: string[];
}

const BLOCK_KEYS: Record<string, ReadonlySet<string>> = {
  intent: new Set(['intent', 'examples', 'metadata']),
  synonym: new Set(['synonym', 'examples']),
  regex: new Set(['regex', 'examples']),
  lookup: new Set(['lookup', 'examples']),
};

/** Rasa strips only these characters from examples (tabs survive). */
function stripExample(text: string): string {
  return text.replace(/^[\n\r ]+|[\n\r ]+$/g, '');
}

interface Line {
  readonly text: string;
  readonly line: number | undefined;
}

/** Splits a block string into `- item` lines with their file line numbers. */
function blockLines(source: YamlSource, raw: unknown, what: string, warnings: string[]): Line[] {
  const node = deref(source, raw);
  const value = scalarString(source, node, what);
  const first = lineOf(source, isScalar(node) ? node : undefined);
  const isBlock =
    isScalar(node) && (node.type === Scalar.BLOCK_LITERAL || node.type === Scalar.BLOCK_FOLDED);
  const base = first === undefined ? undefined : first + (isBlock ? 1 : 0);
  const out: Line[] = [];
  value.split(/\r\n|\r|\n/).forEach((rawLine, i) => {
    const line = base === undefined ? undefined : base + i;
    if (!rawLine.startsWith('-')) {
      if (rawLine.trim() !== '') {
        warnings.push(
          `${source.file}:${line ?? '?'}: ignored line of ${what} not starting with '-': ${rawLine}`,
        );
      }
      return;
    }
    const text = stripExample(rawLine.slice(1));
    if (text !== '') out.push({ text, line });
  });
  return out;
}

function checkKeys(source: YamlSource, map: YAMLMap, kind: string): void {
  const allowed = BLOCK_KEYS[kind];
  if (!allowed) return;
  for (const entry of entriesOf(source, map)) {
    if (!allowed.has(entry.key)) {
      yamlError(
        source,
        entry.keyLine,
        `unknown key '${entry.key}' in ${kind} block (allowed: ${[...allowed].join(', ')})`,
      );
    }
  }
}

function metadataOf(source: YamlSource, raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined || raw === null) return undefined;
  const plain = toPlain(source, raw);
  if (typeof plain === 'object' && plain !== null && !Array.isArray(plain)) {
    return plain as Record<string, unknown>;
  }
  return { value: plain };
}

/**
 * Reads a Rasa 3.x NLU YAML file (`nlu:` and `responses:` keys; other top-level keys are left
 * to the story/domain readers). Problems name the file and line.
 */
export function readNluYaml(
  text: string,
  file: string,
  options: YamlParseOptions = {},
): NluYamlReadResult {
  const source = parseYamlSource(text, file, options);
  const warnings: string[] = [];
  const examples: NluExample[] = [];
  const synonyms: Record<string, string> = {};
  const regexFeatures: RegexFeature[] = [];
  const lookups = new Map<string, string[]>();
  const responses: Record<string, readonly ResponseVariation[]> = {};
  const root = source.doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    return {
      data: { examples, synonyms, regexFeatures, lookupTables: [], responses },
      warnings,
    };
  }
  const top = asMap(source, root, 'the top level of an NLU file');

  const addSynonym = (surface: string, value: string, line: number | undefined): void => {
    const previous = synonyms[surface];
    if (previous !== undefined && previous !== value) {
      warnings.push(
        `${file}:${line ?? '?'}: synonym '${surface}' maps to '${previous}' and '${value}'; the later wins`,
      );
    }
    synonyms[surface] = value;
  };

  const addExample = (
    annotated: string,
    line: number | undefined,
    intent: string,
    metadata: Record<string, unknown> | undefined,
  ): void => {
    let parsed;
    try {
      parsed = parseAnnotatedText(annotated);
    } catch (error) {
      if (error instanceof EntityAnnotationError) yamlError(source, line, error.message);
      throw error;
    }
    for (const e of parsed.entities) {
      const surface = parsed.text.slice(e.start, e.end);
      if (surface !== e.value) addSynonym(surface, e.value, line);
    }
    examples.push({
      text: parsed.text,
      intent,
      entities: parsed.entities,
      ...(metadata ? { metadata } : {}),
    });
  };

  for (const entry of entriesOf(source, top)) {
    if (entry.key === 'nlu') {
      if (entry.value === null || (isScalar(entry.value) && entry.value.value === null)) continue;
      const blocks = asSeq(source, entry.value, "'nlu'", entry.keyLine);
      for (const item of blocks.items) {
        const block = asMap(source, item, 'an nlu block', entry.keyLine);
        const keys = entriesOf(source, block);
        const kind = keys.map((k) => k.key).find((k) => k in BLOCK_KEYS);
        const blockLine = lineOf(source, block);
        if (!kind) {
          yamlError(
            source,
            blockLine,
            `nlu block must have one of the keys intent, synonym, regex, lookup (found: ${keys.map((k) => k.key).join(', ') || 'none'})`,
          );
        }
        checkKeys(source, block, kind);
        const name = scalarString(source, block.get(kind, true), `'${kind}'`, blockLine).trim();
        if (!name) yamlError(source, blockLine, `'${kind}' must not be empty`);
        const examplesNode = deref(source, block.get('examples', true));
        if (examplesNode === undefined || examplesNode === null) {
          warnings.push(`${file}:${blockLine ?? '?'}: ${kind} '${name}' has no examples`);
          continue;
        }
        switch (kind) {
          case 'intent': {
            const intentMeta = metadataOf(source, block.get('metadata', true));
            if (isScalar(examplesNode)) {
              for (const l of blockLines(source, examplesNode, `examples of '${name}'`, warnings)) {
                addExample(l.text, l.line, name, intentMeta);
              }
            } else {
              const list = asSeq(source, examplesNode, `examples of '${name}'`, blockLine);
              for (const ex of list.items) {
                const exNode = deref(source, ex);
                if (isScalar(exNode)) {
                  yamlError(
                    source,
                    lineOf(source, exNode),
                    `examples of '${name}' as a list need items of the form {text: ..., metadata: ...}`,
                  );
                }
                const exMap = asMap(source, exNode, `an example of '${name}'`, blockLine);
                for (const k of entriesOf(source, exMap)) {
                  if (k.key !== 'text' && k.key !== 'metadata') {
                    yamlError(
                      source,
                      k.keyLine,
                      `unknown key '${k.key}' in an example (allowed: text, metadata)`,
                    );
                  }
                }
                const textNode = exMap.get('text', true);
                const exLine = lineOf(source, isMap(exNode) ? exNode : undefined);
                const exText = stripExample(
                  scalarString(source, textNode, `'text' of an example`, exLine),
                );
                if (!exText) continue;
                const exMeta = metadataOf(source, exMap.get('metadata', true));
                const meta =
                  intentMeta || exMeta ? { ...(intentMeta ?? {}), ...(exMeta ?? {}) } : undefined;
                addExample(exText, lineOf(source, textNode) ?? exLine, name, meta);
              }
            }
            break;
          }
          case 'synonym':
            for (const l of blockLines(
              source,
              examplesNode,
              `examples of synonym '${name}'`,
              warnings,
            )) {
              addSynonym(l.text, name, l.line);
            }
            break;
          case 'regex':
            for (const l of blockLines(
              source,
              examplesNode,
              `patterns of regex '${name}'`,
              warnings,
            )) {
              try {
                compilePythonRegex(l.text, false);
              } catch (error) {
                yamlError(source, l.line, `invalid regex '${l.text}': ${(error as Error).message}`);
              }
              regexFeatures.push({ name, pattern: l.text });
            }
            break;
          case 'lookup': {
            const elements = lookups.get(name) ?? [];
            for (const l of blockLines(
              source,
              examplesNode,
              `elements of lookup '${name}'`,
              warnings,
            )) {
              elements.push(l.text);
            }
            lookups.set(name, elements);
            break;
          }
        }
      }
    } else if (entry.key === 'responses') {
      if (entry.value === null || (isScalar(entry.value) && entry.value.value === null)) continue;
      const map = asMap(source, entry.value, "'responses'", entry.keyLine);
      for (const r of entriesOf(source, map)) {
        const list = asSeq(source, r.value, `response '${r.key}'`, r.keyLine);
        const variations: ResponseVariation[] = [];
        for (const v of list.items) {
          const plain = toPlain(source, v);
          if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
            yamlError(
              source,
              lineOf(source, isScalar(v) || isMap(v) ? v : undefined) ?? r.keyLine,
              `variations of response '${r.key}' must be mappings (e.g. {text: ...})`,
            );
          }
          variations.push(plain as ResponseVariation);
        }
        responses[r.key] = variations;
      }
    }
  }
  return {
    data: {
      examples,
      synonyms,
      regexFeatures,
      lookupTables: [...lookups].map(([name, elements]): LookupTable => ({ name, elements })),
      responses,
    },
    warnings,
  };
}
