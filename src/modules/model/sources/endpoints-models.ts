import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseModelServerConfig, type ModelServerConfig } from './model-server-client';

/** Rasa's `${VAR}` interpolation in endpoints.yml; an unset variable is an error. */
function interpolate(value: unknown, file: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
      const v = process.env[name];
      if (v === undefined) {
        throw new Error(`${file}: environment variable ${name} is not set (used in models:)`);
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, file));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolate(v, file)] as const),
    );
  }
  return value;
}

/**
 * The `models:` entry of endpoints.yml (the model server to poll), or null when the file has
 * none. A bad entry throws, naming the file, so the server does not start half-configured.
 */
export function readModelServerEndpoint(file: string): ModelServerConfig | null {
  const doc: unknown = parse(readFileSync(file, 'utf8'));
  if (typeof doc !== 'object' || doc === null) return null;
  const models = (doc as Record<string, unknown>).models;
  if (models === undefined || models === null) return null;
  try {
    const config = parseModelServerConfig(interpolate(models, file));
    // Absent → Rasa's default of 100 s; an explicit null → once at start.
    const given = (models as Record<string, unknown>).wait_time_between_pulls;
    return given === undefined ? { ...config, waitTimeBetweenPulls: 100 } : config;
  } catch (e) {
    throw new Error(`${file}: models: ${e instanceof Error ? e.message : String(e)}`);
  }
}
