import {
  ActionExecutionRejection,
  ActionServerError,
  type Action,
  type ActionContext,
  type ActionServer,
  type ActionServerResponse,
} from 'src/core/actions/action';
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
  /** Request timeout (Rasa: 300 s by default). */
  readonly timeoutMs?: number;
}

export type { ActionServerResponse } from 'src/core/actions/action';

/** HTTP client of Rasa's custom action server protocol (`POST <url>` with the tracker and domain). */
export class ActionEndpoint implements ActionServer {
  constructor(
    readonly config: ActionEndpointConfig,
    private readonly version: string,
  ) {}

  async call(name: string, ctx: ActionContext): Promise<ActionServerResponse> {
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
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.headers ?? {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 300_000),
      });
    } catch (error) {
      throw new ActionServerError(
        name,
        `Failed to execute custom action '${name}': could not reach the action server at ${this.config.url} (${(error as Error).message}).`,
      );
    }
    const text = await response.text().catch(() => '');
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
