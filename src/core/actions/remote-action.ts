import {
  ActionExecutionRejection,
  ActionServerError,
  type Action,
  type ActionContext,
  type ActionServer,
  type ActionServerResponse,
} from 'src/core/actions/action';
import {
  ActionCircuit,
  CircuitOpenError,
  type ActionServerObserver,
  type CircuitOptions,
} from 'src/core/actions/action-circuit';
import { botUtteranceFrom } from 'src/core/actions/nlg';
import { renderResponse } from 'src/core/actions/nlg-server';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { deserializeEvent } from 'src/core/events/event-codec';
import { isJsonObject, isTruthy } from 'src/core/events/json-values';
import { EventVerbosity } from 'src/core/tracker/event-verbosity';

/** `action_endpoint` of endpoints.yml. */
export interface ActionEndpointConfig {
  readonly url: string;
  readonly token?: string;
  readonly tokenName?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Request timeout (Rasa: 300 s; Parley: `ACTION_SERVER_TIMEOUT_MS`, 10 s by default). */
  readonly timeoutMs?: number;
}

/** How the client guards the action server: circuit breaker, observer, propagated headers. */
export interface ActionEndpointOptions {
  /** The circuit breaker's settings; null: no breaker. */
  readonly circuit?: CircuitOptions | null;
  readonly observer?: ActionServerObserver | null;
  /**
   * Headers of the request being served to forward to the action server (W3C `traceparent` /
   * `tracestate`), read when each call is made.
   */
  readonly contextHeaders?: () => Readonly<Record<string, string>>;
}

export type { ActionServerResponse } from 'src/core/actions/action';

/** Default timeout of one call to the action server. */
export const DEFAULT_ACTION_TIMEOUT_MS = 10_000;

/** The action server could not be reached, timed out or failed (5xx): counts against the circuit. */
class ActionServerUnavailable extends ActionServerError {
  readonly countsAgainstCircuit = true;
}

/**
 * HTTP client of Rasa's custom action server protocol (`POST <url>` with the tracker and domain).
 * Each call is bounded by the timeout; with a circuit, repeated failures open it and calls then
 * fail at once (an `ActionServerError`, which the processor treats as Rasa treats an unreachable
 * action server: the turn goes on without the action's events).
 */
export class ActionEndpoint implements ActionServer {
  private readonly circuit: ActionCircuit | null;
  /** The url without query or credentials: the metrics' `target` label. */
  readonly target: string;

  constructor(
    readonly config: ActionEndpointConfig,
    private readonly version: string,
    private readonly options: ActionEndpointOptions = {},
  ) {
    const u = new URL(config.url);
    this.target = `${u.protocol}//${u.host}${u.pathname}`;
    this.circuit = options.circuit
      ? new ActionCircuit(this.target, options.circuit, options.observer ?? null)
      : null;
  }

  /** The circuit's state; `closed` without a breaker. */
  get circuitState(): 'closed' | 'open' | 'half-open' {
    return this.circuit?.state ?? 'closed';
  }

  async call(name: string, ctx: ActionContext): Promise<ActionServerResponse> {
    if (this.circuit === null) return this.timedSend(name, ctx);
    try {
      return await this.circuit.run(() => this.timedSend(name, ctx));
    } catch (error) {
      if (error instanceof CircuitOpenError) {
        throw new ActionServerError(
          name,
          `Failed to execute custom action '${name}': ${error.message}; not calling it until it recovers.`,
        );
      }
      throw error;
    }
  }

  private async timedSend(name: string, ctx: ActionContext): Promise<ActionServerResponse> {
    const started = performance.now();
    let outcome: 'success' | 'failure' = 'failure';
    try {
      const answer = await this.send(name, ctx);
      outcome = 'success';
      return answer;
    } catch (error) {
      if (!(error instanceof ActionServerUnavailable)) outcome = 'success';
      throw error;
    } finally {
      this.options.observer?.callFinished(
        this.target,
        (performance.now() - started) / 1000,
        outcome,
      );
    }
  }

  private async send(name: string, ctx: ActionContext): Promise<ActionServerResponse> {
    const body = {
      next_action: name,
      sender_id: ctx.tracker.senderId,
      tracker: ctx.tracker.currentState(EventVerbosity.ALL),
      domain: ctx.domain.toJSON(),
      version: this.version,
    };
    const url = new URL(this.config.url);
    if (this.config.token) {
      url.searchParams.set(this.config.tokenName ?? 'token', this.config.token);
    }
    const timeoutMs = this.config.timeoutMs ?? DEFAULT_ACTION_TIMEOUT_MS;
    let response: Response;
    let text: string;
    try {
      // The timeout bounds the whole exchange (headers and body): a hung action server never
      // holds the conversation's lock longer than this.
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.contextHeaders?.() ?? {}),
          ...(this.config.headers ?? {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const e = error as Error;
      const why =
        e.name === 'TimeoutError'
          ? `no answer within ${timeoutMs / 1000} s`
          : `could not reach the action server at ${this.target} (${e.message})`;
      throw new ActionServerUnavailable(name, `Failed to execute custom action '${name}': ${why}.`);
    }
    if (response.status === 400) {
      let detail = text;
      try {
        const parsed = JSON.parse(text) as JsonObject;
        if (typeof parsed.error === 'string') detail = parsed.error;
      } catch {
        /* keep the raw text */
      }
      throw new ActionExecutionRejection(
        name,
        `Custom action '${name}' rejected execution: ${detail}`,
      );
    }
    if (response.status >= 500) {
      throw new ActionServerUnavailable(
        name,
        `Failed to execute custom action '${name}': the action server answered ${response.status}.`,
      );
    }
    if (!response.ok) {
      throw new ActionServerError(
        name,
        `Failed to execute custom action '${name}': the action server answered ${response.status}.`,
      );
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ActionServerError(
        name,
        `Failed to execute custom action '${name}': the answer is not JSON.`,
      );
    }
    if (!isJsonObject(parsed)) {
      throw new ActionServerError(
        name,
        `Failed to execute custom action '${name}': the answer is not an object.`,
      );
    }
    const events = parsed.events ?? [];
    const responses = parsed.responses ?? [];
    if (!Array.isArray(events) || !events.every(isJsonObject)) {
      throw new ActionServerError(
        name,
        `Custom action '${name}': 'events' must be a list of events.`,
      );
    }
    if (!Array.isArray(responses) || !responses.every(isJsonObject)) {
      throw new ActionServerError(
        name,
        `Custom action '${name}': 'responses' must be a list of objects.`,
      );
    }
    return { events, responses };
  }
}

/** A custom action run by the action server (Rasa `RemoteAction`). */
export class RemoteAction implements Action {
  constructor(readonly name: string) {}

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
    if (ctx.endpoint === null) {
      throw new ActionServerError(
        this.name,
        `Failed to execute custom action '${this.name}' because no endpoint is configured to run it. Please make sure to set 'action_endpoint' in endpoints.yml (--endpoints).`,
      );
    }
    const answer = await ctx.endpoint.call(this.name, ctx);
    const out: DialogueEvent[] = [];
    // Rasa's `RemoteAction._utter_responses`: a `response` is rendered by the NLG (a missing
    // one utters nothing); extra buttons are appended; only truthy values of the rest override
    // the draft, so rasa-sdk's `buttons: []`, `custom: {}`, `image: null` stay absent.
    for (const r of answer.responses) {
      const { response, template, buttons, ...rest } = r;
      const responseName =
        isTruthy(response) && typeof response === 'string'
          ? response
          : isTruthy(template) && typeof template === 'string'
            ? template
            : null;
      let message: JsonObject = {};
      if (responseName !== null) {
        const draft = await renderResponse(ctx, responseName, {
          ...rest,
          ...(buttons === undefined ? {} : { buttons }),
        });
        if (!isTruthy(draft)) continue;
        message = { ...(draft as JsonObject), utter_action: responseName };
      }
      if (isTruthy(buttons) && Array.isArray(buttons)) {
        const existing = Array.isArray(message.buttons) ? (message.buttons as unknown[]) : [];
        message.buttons = [...existing, ...(buttons as unknown[])] as JsonObject[];
      }
      for (const [k, v] of Object.entries(rest)) {
        if (isTruthy(v)) message[k] = v;
      }
      out.push(botUtteranceFrom(message, ctx.now()));
    }
    for (const raw of answer.events) {
      try {
        out.push(deserializeEvent(raw, ctx.now));
      } catch (error) {
        throw new ActionServerError(
          this.name,
          `Custom action '${this.name}' returned an invalid event: ${(error as Error).message}`,
        );
      }
    }
    return out;
  }
}
