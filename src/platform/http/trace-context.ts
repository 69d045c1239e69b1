import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The W3C Trace Context headers of the request being served. */
const current = new AsyncLocalStorage<Readonly<Record<string, string>>>();

const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;
const NONE: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Express middleware: keeps a valid incoming `traceparent` (and its `tracestate`) for the rest
 * of the request, so outgoing calls made while serving it (the action server) carry them on, as
 * Rasa Pro propagates them. A malformed `traceparent` is dropped, as the W3C spec asks.
 */
export function traceContextMiddleware(
  req: IncomingMessage,
  _res: ServerResponse,
  next: () => void,
): void {
  const parent = req.headers.traceparent;
  if (typeof parent !== 'string' || !TRACEPARENT.test(parent.trim().toLowerCase())) {
    next();
    return;
  }
  const headers: Record<string, string> = { traceparent: parent.trim().toLowerCase() };
  const state = req.headers.tracestate;
  if (typeof state === 'string' && state.length > 0 && state.length <= 512) {
    headers.tracestate = state;
  }
  current.run(headers, next);
}

/** The trace headers to forward from the request being served (none outside a request). */
export function traceHeaders(): Readonly<Record<string, string>> {
  return current.getStore() ?? NONE;
}
