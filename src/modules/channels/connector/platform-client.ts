import { Logger } from '@nestjs/common';
import type * as Undici from 'undici';

/** How a connector reaches its platform's HTTP API. */
export interface PlatformClientOptions {
  /** Platform name for logs (`slack`, `telegram`, `facebook`). */
  readonly name: string;
  /** Base URL of the API, without a trailing slash (configurable: `api_url` in credentials). */
  readonly baseUrl: string;
  /** Timeout of one request, in milliseconds. */
  readonly timeoutMs: number;
  /**
   * An HTTP proxy every call goes through (`proxy` in credentials, as Rasa's Slack connector
   * has), or null/absent for direct calls. HTTPS targets are tunnelled with CONNECT.
   */
  readonly proxy?: string | null;
  /** How many times a 429 answer is retried after its `Retry-After` (default 2). */
  readonly maxRetries?: number;
  /** The longest `Retry-After` honoured; a longer one gives up (default 30 s). */
  readonly maxRetryAfterMs?: number;
  /** Headers of every request (the bot token of Slack). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * A retry hint in the answer's body, for platforms that send it there (Telegram's
   * `parameters.retry_after`), in seconds; the `Retry-After` header wins when both are given.
   */
  readonly retryAfterOf?: (body: unknown) => number | null;
}

/** What the platform answered: status and the body (parsed JSON, or the text). */
export interface PlatformAnswer {
  readonly ok: boolean;
  readonly status: number;
  readonly body: unknown;
}

/** One call: the path below the base URL, its query and body (JSON or form-encoded). */
export interface PlatformCall {
  readonly path: string;
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly query?: Readonly<Record<string, string>>;
  readonly json?: unknown;
  /**
   * An `application/x-www-form-urlencoded` body (Twilio's REST API), instead of `json`; a list
   * value repeats its field (Twilio's `MediaUrl`).
   */
  readonly form?: Readonly<Record<string, string | readonly string[]>>;
  /** Headers of this call on top of the client's (a per-request bearer token). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Another base URL for this call, when the platform names it per conversation (Bot
   * Framework's `serviceUrl`); the path goes below it as below the client's.
   */
  readonly baseUrl?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Milliseconds of a `Retry-After` header: delay-seconds or an HTTP date; null when unusable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The HTTP client of a messaging connector (Node's fetch): JSON in and out, a timeout per
 * request, and a 429 answer retried after the `Retry-After` it names (up to `maxRetries`
 * times, never longer than `maxRetryAfterMs`). It never throws: a network error, a timeout or
 * an error status is logged and returned as `ok: false` (status 0 for no answer), so a
 * failing platform does not fail the turn, as Rasa's connectors log and go on.
 */
export class PlatformClient {
  private readonly log: Logger;
  private readonly fetch: typeof globalThis.fetch;

  constructor(private readonly options: PlatformClientOptions) {
    this.log = new Logger(`Connector[${options.name}]`);
    const proxy = options.proxy ?? null;
    if (proxy === null) {
      this.fetch = globalThis.fetch;
    } else {
      // Node's global fetch takes no proxy; undici (the same fetch, as a library) takes a
      // dispatcher that sends every request through it.
      // Loaded only for a connector with a proxy (start-up time).
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
      const { fetch: proxiedFetch, ProxyAgent } = require('undici') as typeof Undici;
      const dispatcher = new ProxyAgent(proxy);
      this.fetch = ((input: URL, init: RequestInit) =>
        proxiedFetch(input, {
          ...(init as Parameters<typeof proxiedFetch>[1]),
          dispatcher,
        })) as unknown as typeof globalThis.fetch;
    }
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  async call(call: PlatformCall): Promise<PlatformAnswer> {
    const maxRetries = this.options.maxRetries ?? 2;
    const maxWait = this.options.maxRetryAfterMs ?? 30_000;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.once(call);
      if (answer.status !== 429 || attempt >= maxRetries) return this.logged(call, answer.answer);
      const wait =
        retryAfterMs(answer.retryAfter) ??
        secondsMs(this.options.retryAfterOf?.(answer.answer.body));
      if (wait === null || wait > maxWait) return this.logged(call, answer.answer);
      this.log.warn(
        { path: call.path, wait_ms: wait, attempt: attempt + 1 },
        'rate limited by the platform; retrying after Retry-After',
      );
      await sleep(wait);
    }
  }

  private async once(
    call: PlatformCall,
  ): Promise<{ status: number; retryAfter: string | null; answer: PlatformAnswer }> {
    const base = (call.baseUrl ?? this.options.baseUrl).replace(/\/+$/, '');
    const url = new URL(`${base}${call.path}`);
    for (const [k, v] of Object.entries(call.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { ...this.options.headers, ...call.headers };
    let body: string | undefined;
    if (call.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(call.form)) {
        for (const value of typeof v === 'string' ? [v] : v) form.append(k, value);
      }
      body = form.toString();
    } else if (call.json !== undefined) {
      headers['content-type'] = 'application/json; charset=utf-8';
      body = JSON.stringify(call.json);
    }
    try {
      const res = await this.fetch(url, {
        method: call.method ?? 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await res.text();
      let answer: unknown = text;
      try {
        answer = text === '' ? null : (JSON.parse(text) as unknown);
      } catch {
        // not JSON: keep the text
      }
      return {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        answer: { ok: res.ok, status: res.status, body: answer },
      };
    } catch (e) {
      return {
        status: 0,
        retryAfter: null,
        answer: { ok: false, status: 0, body: (e as Error).message },
      };
    }
  }

  private logged(call: PlatformCall, answer: PlatformAnswer): PlatformAnswer {
    if (!answer.ok) {
      this.log.error(
        {
          path: call.path,
          status: answer.status,
          response: (typeof answer.body === 'string'
            ? answer.body
            : JSON.stringify(answer.body)
          ).slice(0, 500),
        },
        'the platform refused or did not answer a call',
      );
    }
    return answer;
  }
}

function secondsMs(seconds: number | null | undefined): number | null {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0
    ? Math.round(seconds * 1000)
    : null;
}
