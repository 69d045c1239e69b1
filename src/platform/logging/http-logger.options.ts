import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Options } from 'pino-http';
import { type AppConfig } from 'src/platform/config/app-config';

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
 * request's log line, tokens in the query string and Authorization headers never logged.
 */
export function httpLoggerOptions(config: AppConfig): Options {
  return {
    level: config.logLevel,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], remove: true },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url.replace(/([?&]token=)[^&]*/g, '$1***'),
      }),
    },
    autoLogging: { ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') },
  };
}
