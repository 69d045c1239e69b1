import {
  ActionServerError,
  type ActionContext,
  type ResponseGenerator,
} from 'src/core/actions/action';
import { generateResponse } from 'src/core/actions/nlg';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { DialogueStack } from 'src/core/flows/stack';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

export type { ResponseGenerator } from 'src/core/actions/action';

/** The `nlg` entry of endpoints.yml (an NLG server). */
export interface NlgEndpointConfig {
  readonly url: string;
  readonly token?: string;
  readonly tokenName?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly basicAuth?: { readonly username: string; readonly password: string };
  readonly timeoutMs?: number;
}

const STRING_OR_NULL = ['text', 'image', 'id', 'response'];
const LIST_OR_NULL = ['buttons', 'elements', 'quick_replies'];
const OBJECT_OR_NULL = ['custom', 'attachment'];

/**
 * Rasa's `CallbackNaturalLanguageGenerator`: every response is asked of an NLG server with
 * `POST <url>` `{response, arguments, tracker, channel: {name}}` (the endpoint's token as a query
 * parameter, its headers and basic auth). The answer (an object, or a list whose first item is
 * used) must have Rasa's NLG response shape (`text`, `buttons`, `image`, `elements`,
 * `attachment`, `custom`, …); anything else fails the action like a failing action server.
 */
export class NlgServer implements ResponseGenerator {
  constructor(readonly config: NlgEndpointConfig) {}

  async generate(
    name: string,
    tracker: DialogueStateTracker,
    channel: string | null,
    kwargs: JsonObject,
  ): Promise<JsonObject | null> {
    // Rasa's `nlg_request_format`.
    const body = {
      response: name,
      arguments: kwargs,
      tracker: tracker.currentState(EventVerbosity.ALL),
      channel: { name: channel },
    };
    const url = new URL(this.config.url);
    const { token, tokenName } = this.config;
    if (token) url.searchParams.set(tokenName ?? 'token', token);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...(this.config.headers ?? {}),
    };
    if (this.config.basicAuth) {
      const { username, password } = this.config.basicAuth;
      headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
    }
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 300_000),
      });
    } catch (error) {
      throw new ActionServerError(
        name,
        `Failed to generate response '${name}': could not reach the NLG server at ${this.config.url} (${(error as Error).message}).`,
      );
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      throw new ActionServerError(
        name,
        `Failed to generate response '${name}': the NLG server answered ${res.status}.`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const answer: unknown = Array.isArray(parsed) ? (parsed as unknown[])[0] : parsed;
    if (!validNlgResponse(answer)) {
      throw new ActionServerError(
        name,
        `Failed to generate response '${name}': the NLG server returned an invalid response.`,
      );
    }
    return { ...answer };
  }
}

/** Rasa's `CallbackNaturalLanguageGenerator.validate_response` (its JSON schema). */
function validNlgResponse(value: unknown): value is JsonObject {
  if (!isJsonObject(value)) return false;
  for (const k of STRING_OR_NULL) {
    if (value[k] !== undefined && value[k] !== null && typeof value[k] !== 'string') return false;
  }
  for (const k of LIST_OR_NULL) {
    if (value[k] !== undefined && value[k] !== null && !Array.isArray(value[k])) return false;
  }
  for (const k of OBJECT_OR_NULL) {
    if (value[k] !== undefined && value[k] !== null && !isJsonObject(value[k])) return false;
  }
  return true;
}

/**
 * `nlg.generate(name, tracker, channel, **kwargs)`: the NLG server when one is configured, else
 * the domain's responses (Rasa's TemplatedNaturalLanguageGenerator).
 */
export function renderResponse(
  ctx: ActionContext,
  name: string,
  kwargs: JsonObject = {},
): Promise<JsonObject | null> {
  if (ctx.nlg) return ctx.nlg.generate(name, ctx.tracker, ctx.channel, kwargs);
  return Promise.resolve(
    generateResponse(
      ctx.domain,
      name,
      ctx.tracker.slotValuesObject(),
      ctx.channel,
      kwargs,
      ctx.random,
      // Jinja responses (CALM) see the dialogue stack's context as `context`.
      new DialogueStack(ctx.tracker.stack).context(),
    ),
  );
}
