import { existsSync, readFileSync } from 'node:fs';
import { DialogueError, type JsonObject } from 'src/core';
import { parse as parseYaml } from 'yaml';

/** One channel's entry of `credentials.yml`: its settings, or null for an empty entry. */
export type ChannelCredentials = Readonly<Record<string, unknown>> | null;

/** `credentials.yml` read: channel key → settings, in file order. */
export type CredentialsFile = ReadonlyMap<string, ChannelCredentials>;

/**
 * Reads a Rasa-format `credentials.yml`: a mapping from channel name (`rest`, `callback`,
 * `socketio`, or `<module-path>.<ClassName>` of a custom channel) to that channel's settings.
 * An empty file, or no file, configures no channel. Errors name the file and the key.
 */
export function readCredentialsFile(file: string | null): CredentialsFile {
  if (file === null || !existsSync(file)) return new Map();
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw invalid(file, null, `is not valid YAML: ${(e as Error).message}`);
  }
  return parseCredentials(doc, file);
}

/** Validates the parsed document of a credentials file (see readCredentialsFile). */
export function parseCredentials(doc: unknown, file: string): CredentialsFile {
  const result = new Map<string, ChannelCredentials>();
  if (doc === null || doc === undefined) return result;
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw invalid(file, null, 'must be a mapping from channel name to its settings');
  }
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    if (value === null || value === undefined) {
      result.set(key, null);
    } else if (typeof value === 'object' && !Array.isArray(value)) {
      result.set(key, value as JsonObject);
    } else {
      throw invalid(file, key, 'must be a mapping of settings (or empty)');
    }
  }
  return result;
}

/** A `CONFIG.INVALID` error naming the credentials file and, when known, the key. */
export function invalid(file: string, key: string | null, problem: string): DialogueError {
  const where = key === null ? `credentials file ${file}` : `credentials ${file}: "${key}"`;
  return new DialogueError('CONFIG.INVALID', `${where} ${problem}`, {
    file,
    ...(key === null ? {} : { key }),
  });
}

/** Reads an optional string setting of a channel entry; wrong types name the key. */
export function stringSetting(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  key: string,
): string | null {
  const value = settings?.[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(file, `${channel}.${key}`, 'must be a string');
  return value;
}

/** Reads an optional boolean setting of a channel entry; wrong types name the key. */
export function booleanSetting(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  key: string,
  fallback: boolean,
): boolean {
  const value = settings?.[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') {
    throw invalid(file, `${channel}.${key}`, 'must be true or false');
  }
  return value;
}

/** Reads an optional mapping of string values (headers, query params). */
export function stringMapSetting(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  key: string,
): Record<string, string> {
  const value = settings?.[key];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(file, `${channel}.${key}`, 'must be a mapping');
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw invalid(file, `${channel}.${key}.${k}`, 'must be a string');
    }
    out[k] = String(v);
  }
  return out;
}

/** Keys of a channel entry that the channel does not know (logged as a warning at start). */
export function unknownKeys(settings: ChannelCredentials, known: readonly string[]): string[] {
  return Object.keys(settings ?? {}).filter((key) => !known.includes(key));
}
