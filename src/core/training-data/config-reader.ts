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
import { isMap, isScalar } from 'yaml';

/** One pipeline or policy entry: `{name: X, ...params}`. */
export interface ComponentConfig {
  readonly name: string;
  readonly [param: string]: unknown;
}

/** config.yml of a Rasa 3.x project. `pipeline`/`policies` are null when absent or empty. */
export interface ProjectConfig {
  readonly recipe: string;
  readonly language: string;
  readonly assistantId: string | null;
  readonly pipeline: readonly ComponentConfig[] | null;
  readonly policies: readonly ComponentConfig[] | null;
  /** 1-based line of each pipeline entry (same order), for error messages. */
  readonly pipelineLines: readonly (number | undefined)[];
}

/** What the NLU trainer needs from config.yml. */
export type NluConfig = Pick<ProjectConfig, 'language' | 'pipeline'> &
  Partial<Pick<ProjectConfig, 'assistantId' | 'recipe' | 'pipelineLines'>>;

const TOP_KEYS = new Set([
  'version',
  'recipe',
  'language',
  'assistant_id',
  'pipeline',
  'policies',
  'importers',
  'data',
]);
const RECIPES = new Set(['default.v1', 'graph.v1']);

function readComponents(
  source: YamlSource,
  raw: unknown,
  what: string,
  keyLine: number | undefined,
): { list: ComponentConfig[] | null; lines: (number | undefined)[] } {
  const node = deref(source, raw);
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) {
    return { list: null, lines: [] };
  }
  const seq = asSeq(source, node, `'${what}'`, keyLine);
  const list: ComponentConfig[] = [];
  const lines: (number | undefined)[] = [];
  for (const item of seq.items) {
    const itemNode = deref(source, item);
    const line = lineOf(source, isMap(itemNode) || isScalar(itemNode) ? itemNode : undefined);
    if (isScalar(itemNode)) {
      list.push({ name: scalarString(source, itemNode, `a ${what} entry`, line) });
      lines.push(line);
      continue;
    }
    const map = asMap(source, itemNode, `a ${what} entry`, keyLine);
    const params: Record<string, unknown> = {};
    let name: string | undefined;
    for (const entry of entriesOf(source, map)) {
      if (entry.key === 'name') name = scalarString(source, entry.value, "'name'", entry.keyLine);
      else params[entry.key] = toPlain(source, entry.value);
    }
    if (!name) yamlError(source, line, `a ${what} entry lacks 'name'`);
    list.push({ ...params, name });
    lines.push(line);
  }
  return { list: list.length ? list : null, lines };
}

/** Reads config.yml. Unknown top-level keys, bad recipes and malformed entries are errors. */
export function readConfigYaml(
  text: string,
  file: string,
  options: YamlParseOptions = {},
): ProjectConfig {
  const source = parseYamlSource(text, file, { code: 'CONFIG.INVALID', ...options });
  const root = source.doc.contents;
  let recipe = 'default.v1';
  let language = 'en';
  let assistantId: string | null = null;
  let pipeline: ComponentConfig[] | null = null;
  let policies: ComponentConfig[] | null = null;
  let pipelineLines: (number | undefined)[] = [];
  if (root !== null && !(isScalar(root) && root.value === null)) {
    const top = asMap(source, root, 'the top level of config.yml');
    for (const entry of entriesOf(source, top)) {
      if (!TOP_KEYS.has(entry.key)) {
        yamlError(
          source,
          entry.keyLine,
          `unknown key '${entry.key}' (allowed: recipe, language, assistant_id, pipeline, policies)`,
        );
      }
      const value = deref(source, entry.value);
      const isNull = value === null || (isScalar(value) && value.value === null);
      switch (entry.key) {
        case 'recipe':
          if (isNull) break;
          recipe = scalarString(source, value, "'recipe'", entry.keyLine);
          if (!RECIPES.has(recipe)) {
            yamlError(source, entry.keyLine, `unknown recipe '${recipe}' (expected default.v1)`);
          }
          break;
        case 'language':
          if (!isNull) language = scalarString(source, value, "'language'", entry.keyLine);
          break;
        case 'assistant_id':
          if (!isNull) assistantId = scalarString(source, value, "'assistant_id'", entry.keyLine);
          break;
        case 'pipeline': {
          const r = readComponents(source, value, 'pipeline', entry.keyLine);
          pipeline = r.list;
          pipelineLines = r.lines;
          break;
        }
        case 'policies':
          policies = readComponents(source, value, 'policies', entry.keyLine).list;
          break;
        default:
          break;
      }
    }
  }
  return { recipe, language, assistantId, pipeline, policies, pipelineLines };
}
