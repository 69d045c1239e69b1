import { readFile } from 'node:fs/promises';
import { DialogueError } from 'src/core';
import { parse } from 'yaml';

/**
 * Reads an endpoints.yml into its top-level mapping: `${VAR}` is replaced by the environment
 * variable (empty when unset), as in Rasa; invalid YAML is `CONFIG.INVALID` naming the file; a
 * document that is not a mapping reads as `{}`.
 */
export async function readEndpointsYaml(file: string): Promise<Record<string, unknown>> {
  const text = (await readFile(file, 'utf8')).replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g,
    (_m, name: string) => process.env[name] ?? '',
  );
  let data: unknown;
  try {
    data = parse(text, { maxAliasCount: 50 });
  } catch (e) {
    throw new DialogueError('CONFIG.INVALID', `${file}: invalid YAML: ${(e as Error).message}`);
  }
  return typeof data === 'object' && data !== null && !Array.isArray(data)
    ? (data as Record<string, unknown>)
    : {};
}
