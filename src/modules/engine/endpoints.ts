import { readFile } from 'node:fs/promises';
import {
  ActionEndpoint,
  DialogueError,
  NlgServer,
  type ActionEndpointConfig,
  type ActionEndpointOptions,
  type NlgEndpointConfig,
} from 'src/core';
import { tracingSettingsOf, type TracingSettings } from 'src/modules/observability';
import { parse } from 'yaml';
import { eventBrokerOf, type EventBrokerConfig } from './event-broker-config';

/** What the dialogue takes from endpoints.yml. */
export interface DialogueEndpoints {
  readonly action: ActionEndpoint | null;
  /** The `nlg` endpoint (an NLG server); null: the domain's responses. */
  readonly nlg: NlgServer | null;
  /** The `tracing` entry (Rasa Pro's keys); null: tracing off. */
  readonly tracing: TracingSettings | null;
  /** Entries Parley reads but does not act on, each with what it does instead. */
  readonly warnings: string[];
}

/** What Parley uses instead of the endpoints.yml stores it does not serve. */
export interface StoreSettings {
  readonly lockStore: 'memory' | 'postgres';
}

async function readYaml(file: string): Promise<Record<string, unknown>> {
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

function actionEndpointOf(
  file: string,
  data: Record<string, unknown>,
  version: string,
  timeoutMs: number,
  options: ActionEndpointOptions,
): ActionEndpoint | null {
  const entry = data.action_endpoint;
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
  return new ActionEndpoint(config, version, options);
}

/**
 * The `nlg` entry (Rasa's `NaturalLanguageGenerator.create`): none, or `type: template` /
 * `type: response`, is the domain's responses; a `url` (with `type` absent or `callback`) is an
 * NLG server, with the endpoint's `params`, `token` / `token_name`, `headers` and `basic_auth`
 * (`{username, password}`); another `type` (a Python class) cannot be loaded: warned, domain
 * responses instead.
 */
function nlgOf(
  file: string,
  data: Record<string, unknown>,
  timeoutMs: number,
  warnings: string[],
): NlgServer | null {
  const entry = data.nlg;
  if (entry === undefined || entry === null) return null;
  if (typeof entry !== 'object' || Array.isArray(entry)) {
    throw new DialogueError('CONFIG.INVALID', `${file}: nlg must be a mapping (url, token, …)`);
  }
  const e = entry as Record<string, unknown>;
  const type = typeof e.type === 'string' ? e.type : null;
  if (type === 'template' || type === 'response') return null;
  if (type !== null && type !== 'callback') {
    warnings.push(
      `${file}: nlg type '${type}' is a Python class Parley cannot load; the domain's responses are used instead`,
    );
    return null;
  }
  if (typeof e.url !== 'string' || !/^https?:\/\//.test(e.url)) {
    throw new DialogueError('CONFIG.INVALID', `${file}: nlg needs an http(s) 'url'`);
  }
  const auth = e.basic_auth as Record<string, unknown> | undefined;
  if (
    auth !== undefined &&
    auth !== null &&
    (typeof auth !== 'object' ||
      typeof auth.username !== 'string' ||
      typeof auth.password !== 'string')
  ) {
    throw new DialogueError(
      'CONFIG.INVALID',
      `${file}: nlg.basic_auth needs a 'username' and a 'password'`,
    );
  }
  const headers: Record<string, string> = {};
  if (typeof e.headers === 'object' && e.headers !== null && !Array.isArray(e.headers)) {
    for (const [k, v] of Object.entries(e.headers)) headers[k] = String(v);
  }
  const url = new URL(e.url);
  if (typeof e.params === 'object' && e.params !== null && !Array.isArray(e.params)) {
    for (const [k, v] of Object.entries(e.params)) url.searchParams.set(k, String(v));
  }
  const config: NlgEndpointConfig = {
    url: url.toString(),
    timeoutMs,
    headers,
    ...(typeof e.token === 'string' ? { token: e.token } : {}),
    ...(typeof e.token_name === 'string' ? { tokenName: e.token_name } : {}),
    ...(auth
      ? { basicAuth: { username: String(auth.username), password: String(auth.password) } }
      : {}),
  };
  return new NlgServer(config);
}

/** The type name of a store entry (`type: redis`), or null. */
function storeType(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const t = (value as Record<string, unknown>).type;
  return typeof t === 'string' ? t : null;
}

/**
 * Rasa's stores of endpoints.yml that Parley does not serve: each present entry is a warning
 * naming the key and what Parley uses instead (an in-memory lock store matches
 * `LOCK_STORE=memory` and is not warned about).
 */
function storeWarnings(
  file: string,
  data: Record<string, unknown>,
  stores: StoreSettings,
): string[] {
  const warnings: string[] = [];
  const typed = (key: string): string => {
    const t = storeType(data[key]);
    return t === null ? key : `${key} (type ${t})`;
  };
  if (data.tracker_store !== undefined && data.tracker_store !== null) {
    warnings.push(
      `${file}: ${typed('tracker_store')} is not used: Parley keeps conversations in its PostgreSQL database (DATABASE_URL)`,
    );
  }
  if (data.lock_store !== undefined && data.lock_store !== null) {
    const t = storeType(data.lock_store);
    const inMemory = t === null || t === 'in_memory' || t === 'memory';
    if (!(inMemory && stores.lockStore === 'memory')) {
      warnings.push(
        `${file}: ${typed('lock_store')} is not used: Parley locks conversations with LOCK_STORE=${stores.lockStore}`,
      );
    }
  }
  return warnings;
}

/**
 * Reads the dialogue's entries of an endpoints.yml: action server (guarded by `actionOptions`:
 * circuit breaker, metrics observer, propagated headers), NLG server, tracing, store warnings.
 */
export async function readDialogueEndpoints(
  file: string,
  version: string,
  timeoutMs: number,
  stores: StoreSettings,
  actionOptions: ActionEndpointOptions = {},
): Promise<DialogueEndpoints> {
  const data = await readYaml(file);
  const warnings = storeWarnings(file, data, stores);
  const nlg = nlgOf(file, data, timeoutMs, warnings);
  let tracing: TracingSettings | null;
  try {
    tracing = tracingSettingsOf(file, data.tracing, warnings);
  } catch (e) {
    throw new DialogueError('CONFIG.INVALID', (e as Error).message);
  }
  const action = actionEndpointOf(file, data, version, timeoutMs, actionOptions);
  return { action, nlg, tracing, warnings };
}

/** The `event_broker` entry of an endpoints.yml (null: none); throws on a malformed one. */
export async function readEventBroker(file: string): Promise<EventBrokerConfig | null> {
  return eventBrokerOf(file, (await readYaml(file)).event_broker);
}
