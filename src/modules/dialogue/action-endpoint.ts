import { readFile } from 'node:fs/promises';
import { ActionEndpoint, DialogueError, type ActionEndpointConfig } from 'src/core';
import { parse } from 'yaml';

/**
 * Reads `action_endpoint` from an endpoints.yml (`url`, optional `token`, `token_name`,
 * `headers`); null when the file has none. `${VAR}` references are replaced from the
 * environment, as Rasa does.
 */
export async function readActionEndpoint(
  file: string,
  version: string,
  timeoutMs: number,
): Promise<ActionEndpoint | null> {
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
  const entry = (data as Record<string, unknown> | null)?.action_endpoint;
  if (entry === undefined || entry === null) return null;
  const e = entry as Record<string, unknown>;
  if (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url)) {
    throw new DialogueError('CONFIG.INVALID', `${file}: action_endpoint needs an http(s) 'url'`);
  }
  const config: ActionEndpointConfig = {
    url: e.url,
    timeoutMs,
    ...(typeof e.token === 'string' ? { token: e.token } : {}),
    ...(typeof e.token_name === 'string' ? { tokenName: e.token_name } : {}),
    ...(typeof e.headers === 'object' && e.headers !== null
      ? { headers: e.headers as Record<string, string> }
      : {}),
  };
  return new ActionEndpoint(config, version);
}
