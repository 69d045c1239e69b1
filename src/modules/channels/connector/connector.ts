import type { Request, Response } from 'express';
import type { Server as HttpServer } from 'node:http';
import { type BotMessage, DialogueError, OutputChannel } from 'src/core';
import { pythonStr } from 'src/core/actions/nlg';
import { isJsonObject } from 'src/core/events/json-values';
import { type ChannelCredentials, invalid, stringSetting } from 'src/modules/channels/credentials';
import { type IdempotentIngress } from 'src/modules/idempotency';

/**
 * The path of a request below `/webhooks/<name>/` (`webhook`, Telegram's `set_webhook`,
 * `webhook/<id>/activities` …), one of the routes its definition declares.
 */
export type ConnectorRoute = string;

/**
 * A messaging connector (Slack, Telegram, Messenger …): one platform's webhook turned into
 * user messages through the channel input contract (ChannelInput), and the platform's API as
 * the output channel. The controller hands it every request to its routes; `handle` answers
 * false for a method/route it does not serve (a 404 failure body).
 */
export interface Connector {
  readonly name: string;
  /** Serves one request; false when the connector has no such route for the method. */
  handle(route: ConnectorRoute, req: Request, res: Response): Promise<boolean>;
  /** The output channel for `output_channel=<name>`, or null (Rasa's get_output_channel). */
  outputChannel(): OutputChannel | null;
  /** Work at application start (Telegram's setWebhook); never throws. */
  start?(): Promise<void>;
  /**
   * For connectors with a WebSocket (Jambonz): called once the HTTP server exists, to take
   * its `upgrade` requests for the connector's paths (and leave the others alone).
   */
  attach?(server: HttpServer): void;
  /** Before the HTTP server closes: close open sockets, stop timers. */
  stop?(): void;
}

/**
 * The settings every connector reads besides its own: `proxy` (Rasa's, of its Slack connector:
 * the HTTP proxy the platform's API is reached through) and Parley's `api_url` and `timeout`.
 */
export const CONNECTOR_KEYS = ['api_url', 'timeout', 'proxy'] as const;

/** The API base URL, timeout and proxy of a connector entry (PlatformClient's options). */
export interface ConnectorHttpSettings {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** `http(s)://[user:password@]host:port` of a proxy, or null for direct calls. */
  readonly proxy: string | null;
}

/**
 * Reads `api_url` (default: the platform's), `timeout` (seconds, default 10) and `proxy` (an
 * http(s) URL; its credentials, if any, are never logged).
 */
export function connectorHttpSettings(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  defaultUrl: string,
): ConnectorHttpSettings {
  const url = stringSetting(file, channel, settings, 'api_url') ?? defaultUrl;
  if (!isHttpUrl(url)) {
    throw invalid(file, `${channel}.api_url`, `must be an http(s) URL, got "${url}"`);
  }
  const timeout = settings?.timeout;
  if (
    timeout !== undefined &&
    timeout !== null &&
    (typeof timeout !== 'number' || !(timeout > 0))
  ) {
    throw invalid(file, `${channel}.timeout`, 'must be a positive number of seconds');
  }
  const proxy = stringSetting(file, channel, settings, 'proxy');
  if (proxy !== null && proxy !== '' && !isHttpUrl(proxy)) {
    // The value may hold a password: the message names the rule, not the value.
    throw invalid(file, `${channel}.proxy`, 'must be an http(s) URL of a proxy');
  }
  return {
    baseUrl: url.replace(/\/+$/, ''),
    timeoutMs: typeof timeout === 'number' ? timeout * 1000 : 10_000,
    proxy: proxy === null || proxy === '' ? null : proxy,
  };
}

function isHttpUrl(value: string): boolean {
  return URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);
}

/**
 * A secret Parley checks requests with where Rasa's connector has none (an outgoing webhook's
 * token, Twilio Voice's auth token …): null when absent or empty, so an entry copied from a
 * Rasa project starts; the definition's `warnings` then say its requests are not checked.
 */
export function optionalSecret(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  key: string,
): string | null {
  const value = stringSetting(file, channel, settings, key);
  return value === null || value === '' ? null : value;
}

/** A string setting the connector cannot run without. */
export function requiredSetting(
  file: string,
  channel: string,
  settings: ChannelCredentials,
  key: string,
  why: string,
): string {
  const value = stringSetting(file, channel, settings, key);
  if (value === null || value === '') {
    throw invalid(file, `${channel}.${key}`, `is missing: ${why}`);
  }
  return value;
}

/** The request's raw body (the body parser leaves connector webhooks unparsed), or empty. */
export function rawBody(req: Request): Buffer {
  const body: unknown = req.body;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.alloc(0);
}

/** The 401 failure body of a request whose signature is missing or wrong. */
export function badSignature(channel: string, message: string): DialogueError {
  return new DialogueError('AUTH.NOT_AUTHENTICATED', message, { channel });
}

/** A 400 failure body for a signed body that is not what the platform sends. */
export function badBody(channel: string, message: string): DialogueError {
  return new DialogueError('REQUEST.INVALID_PARAMETER', message, { channel });
}

/** Parses a signed JSON body; a malformed one is a 400 failure body. */
export function parseJsonBody(channel: string, raw: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw badBody(channel, `The request body is not valid JSON: ${(e as Error).message}`);
  }
  if (!isJsonObject(value)) throw badBody(channel, 'The request body must be a JSON object.');
  return value;
}

/** Python's `json.dumps` of a value (its `", "` and `": "` separators, ASCII escapes). */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `${pythonJsonDumps(k)}: ${pythonJsonDumps(v)}`,
  );
  return `{${entries.join(', ')}}`;
}

/**
 * The output channel of a connector, with the fallbacks of Rasa's base `OutputChannel` for the
 * parts a platform does not render itself: an image is the text `Image: <url>`, an attachment
 * `Attachment: <value>`, custom JSON its `json.dumps`, buttons the text then one line
 * `<n>: <title> (<payload>)` each, quick replies are buttons and each element is the text
 * `<title> : <subtitle>` with its buttons. A connector overrides what its platform renders;
 * `sendTextMessage` is the one method it must write. The bot message being sent is `current`
 * (Rasa hands its extra keys, such as Telegram's `button_type`, to the send methods).
 */
export abstract class ConnectorOutputChannel extends OutputChannel {
  protected current: BotMessage = {};

  override async sendResponse(recipientId: string, message: BotMessage): Promise<void> {
    this.current = message;
    try {
      await super.sendResponse(recipientId, message);
    } finally {
      this.current = {};
    }
  }

  /** Every part ends in a send* method; a bare `send` (not used by the engine) is text. */
  send(recipientId: string, message: BotMessage): Promise<void> {
    return this.sendResponse(recipientId, message);
  }

  abstract override sendTextMessage(recipientId: string, text: string): Promise<void>;

  override sendImageUrl(recipientId: string, image: unknown): Promise<void> {
    return this.sendTextMessage(recipientId, `Image: ${pythonStr(image)}`);
  }

  override sendAttachment(recipientId: string, attachment: unknown): Promise<void> {
    return this.sendTextMessage(recipientId, `Attachment: ${pythonStr(attachment)}`);
  }

  override sendCustomJson(recipientId: string, custom: unknown): Promise<void> {
    return this.sendTextMessage(recipientId, pythonJsonDumps(custom));
  }

  override async sendTextWithButtons(
    recipientId: string,
    text: string | null,
    buttons: readonly unknown[],
  ): Promise<void> {
    await this.sendTextMessage(recipientId, text ?? 'None');
    for (const [i, button] of buttons.entries()) {
      const b = isJsonObject(button) ? button : {};
      await this.sendTextMessage(
        recipientId,
        `${i + 1}: ${pythonStr(b.title ?? '')} (${pythonStr(b.payload ?? '')})`,
      );
    }
  }

  override sendQuickReplies(
    recipientId: string,
    text: string | null,
    quickReplies: readonly unknown[],
  ): Promise<void> {
    return this.sendTextWithButtons(recipientId, text, quickReplies);
  }

  override async sendElements(recipientId: string, elements: readonly unknown[]): Promise<void> {
    for (const element of elements) {
      const e = isJsonObject(element) ? element : {};
      const title = e.title === undefined ? '' : pythonStr(e.title);
      const subtitle = e.subtitle === undefined ? '' : pythonStr(e.subtitle);
      await this.sendTextWithButtons(
        recipientId,
        `${title} : ${subtitle}`,
        Array.isArray(e.buttons) ? e.buttons : [],
      );
    }
  }
}

/** Rasa splits a text on blank lines into one platform message each. */
export function textParts(text: string): string[] {
  return text.trim().split('\n\n');
}

/**
 * Runs one delivery of a platform's webhook once per platform id (Slack's `event_id`,
 * Telegram's `update_id`, a Messenger `mid`) through the idempotency module: a platform that
 * delivers the same event again (after a timeout or a lost answer) gets the first answer
 * replayed instead of a second turn; a delivery that failed gave its key up, so a redelivery
 * runs. Without an id, or without the ingress (unit tests), `work` simply runs.
 */
export function once(
  ingress: IdempotentIngress | null,
  req: Request,
  res: Response,
  scope: { readonly scope: string; readonly sender: string },
  platformId: string | null,
  work: () => Promise<void>,
): Promise<void> {
  if (ingress === null || platformId === null || platformId === '') return work();
  return ingress.run(req, res, scope, platformId.slice(0, 255), work);
}
