import {
  ActionEndpoint,
  DialogueError,
  NlgServer,
  type ActionEndpointConfig,
  type ActionEndpointOptions,
  type NlgEndpointConfig,
} from 'src/core';
import { tracingSettingsOf, type TracingSettings } from 'src/modules/observability';
import { readEndpointsYaml } from 'src/platform/config/endpoints-yaml';
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

/**
 * Reads the dialogue's entries of an endpoints.yml: action server (guarded by `actionOptions`:
 * circuit breaker, metrics observer, propagated headers), NLG server, tracing. (`tracker_store` and
 * `lock_store` are read by the tracker module, `event_broker` by the event-broker module.)
 */
export async function readDialogueEndpoints(
  file: string,
  version: string,
  timeoutMs: number,
  actionOptions: ActionEndpointOptions = {},
): Promise<DialogueEndpoints> {
  const data = await readEndpointsYaml(file);
  const warnings: string[] = [];
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
  const yaml = await readEndpointsYaml(file);
  return eventBrokerOf(file, yaml.event_broker, yaml.anonymization);
}
