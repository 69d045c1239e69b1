import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Options } from 'pino-http';
import { type AppConfig } from 'src/platform/config/app-config';
import { baseLoggerOptions } from './logger-options';
import { redactHeaders, redactUrl } from './redact';

/**
 * The request's id: the caller's `x-request-id` when it is sane, else a new one; set once on the
 * request and echoed in the response.
 */
export function requestId(req: IncomingMessage & { id?: unknown }, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader('x-request-id', id);
  return id;
}

/**
 * pino-http options shared by the request logger and the application logger: JSON lines, a
 * request id (from `x-request-id` or a new one) echoed in the response and carried by the
 * request's log line, and no credential in any line (`baseLoggerOptions`): the request line
 * holds the URL with credential parameters hidden, the response line the headers with
 * credential headers (`set-cookie`, …) hidden.
 */
export function httpLoggerOptions(config: AppConfig): Options {
  const base = baseLoggerOptions(config.logLevel);
  return {
    ...base,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    serializers: {
      ...base.serializers,
      req: (req: { id: unknown; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
      }),
      res: (res: { statusCode: number; headers?: Record<string, unknown> }) => ({
        statusCode: res.statusCode,
        headers: redactHeaders(res.headers),
      }),
    },
    autoLogging: { ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') },
  };
}
