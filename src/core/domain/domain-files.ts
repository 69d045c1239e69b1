import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { parseYamlSource } from 'src/core/training-data/yaml-source';
import { stringify } from 'yaml';

/** Top-level keys that make a YAML file a domain file (Rasa's `ALL_DOMAIN_KEYS`). */
const DOMAIN_KEYS = [
  'intents',
  'entities',
  'slots',
  'responses',
  'actions',
  'forms',
  'e2e_actions',
  'session_config',
  'config',
];

const YAML_EXTENSIONS = new Set(['.yml', '.yaml']);

/** A domain as read from a file or a directory: its YAML text and where it came from. */
export interface DomainSource {
  /** The domain YAML (the merged domain of a directory). */
  readonly text: string;
  /** The file, or the directory, it was read from (for messages). */
  readonly source: string;
  /** The domain files read, in merge order. */
  readonly files: readonly string[];
}

async function yamlFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (path: string): Promise<void> => {
    const entries = (await readdir(path)).sort();
    for (const entry of entries) {
      if (entry.startsWith('.')) continue;
      const full = join(path, entry);
      if ((await stat(full)).isDirectory()) await walk(full);
      else if (YAML_EXTENSIONS.has(extname(entry).toLowerCase())) out.push(full);
    }
  };
  await walk(dir);
  return out;
}

/** Identity of a list item for deduplication: a name, or `{name: {...}}`'s name. */
function itemKey(item: unknown): string {
  if (typeof item === 'string') return item;
  if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
    const keys = Object.keys(item);
    if (keys.length === 1) return keys[0] as string;
  }
  return JSON.stringify(item);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Rasa's `Domain.from_directory` + `Domain.merge`: list attributes (`intents`, `entities`,
 * `actions`, …) are united without duplicates; mapping attributes (`slots`, `responses`,
 * `forms`, `session_config`, …) are merged key by key, and single values, with the later file
 * winning a conflict (each file read is merged as `other.merge(domain_so_far)`).
 */
export function mergeDomainDocuments(
  docs: readonly Record<string, unknown>[],
): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const doc of docs) {
    for (const [key, value] of Object.entries(doc)) {
      const before = merged[key];
      if (Array.isArray(before) && Array.isArray(value)) {
        const seen = new Map<string, unknown>();
        for (const item of [...(before as unknown[]), ...(value as unknown[])]) {
          const k = itemKey(item);
          if (!seen.has(k) || typeof item !== 'string') seen.set(k, item);
        }
        merged[key] = [...seen.values()];
      } else if (isMap(before) && isMap(value)) {
        merged[key] = { ...before, ...value };
      } else {
        merged[key] = value;
      }
    }
  }
  return merged;
}

/**
 * Reads `--domain`: a domain file, or a directory whose YAML files (recursively, in name order)
 * are merged into one domain as Rasa does; YAML files without any domain key are left out. A
 * directory without a domain file is `DOMAIN.INVALID`.
 */
export async function readDomainPath(path: string): Promise<DomainSource> {
  if (!(await stat(path)).isDirectory()) {
    return { text: await readFile(path, 'utf8'), source: path, files: [path] };
  }
  const docs: Record<string, unknown>[] = [];
  const files: string[] = [];
  for (const file of await yamlFilesUnder(path)) {
    const text = await readFile(file, 'utf8');
    const yaml = parseYamlSource(text, file, { code: 'DOMAIN.INVALID' });
    const data: unknown = yaml.doc.toJS({ maxAliasCount: 50 });
    if (!isMap(data) || !DOMAIN_KEYS.some((k) => k in data)) continue;
    docs.push(data);
    files.push(file);
  }
  if (docs.length === 0) {
    throw new DialogueError(
      'DOMAIN.INVALID',
      `${path}: the directory holds no domain file (a YAML file with intents, responses, slots, actions or forms)`,
      { file: path },
    );
  }
  if (docs.length === 1) {
    return { text: await readFile(files[0] as string, 'utf8'), source: path, files };
  }
  return { text: stringify(mergeDomainDocuments(docs)), source: path, files };
}
