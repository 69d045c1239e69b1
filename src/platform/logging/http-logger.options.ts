import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Options } from 'pino-http';
import { type AppConfig } from 'src/platform/config/app-config';
import { baseLoggerOptions } from './logger-options';
import { redactHeaders, redactUrl } from './redact';

/**
 * The request's id: the caller's `x-request-id` when it is sane, else a new one. The one
 * function both ways of answering use: the request logger (pino-http's `genReqId`, which also
 * keeps it as `req.id` for the log line) and, with request logging off, the middleware that only
 * echoes it (no property is added to the request: that costs every request a hidden-class
 * change).
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

const SANE_REQUEST_ID = /^[\w.-]{1,128}$/;

/** Middleware with request logging off: the response carries the request's id. */
export function echoRequestId(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  res.setHeader('x-request-id', requestIdOf(req));
  next();
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
      const id = requestIdOf(req);
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
