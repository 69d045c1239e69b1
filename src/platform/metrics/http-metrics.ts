import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics } from 'prom-client';
import { histogram, metricsRegistry } from './registry';

/**
 * prom-client's default process and Node.js metrics (`process_cpu_seconds_total`,
 * `nodejs_eventloop_lag_seconds`, `nodejs_heap_size_used_bytes`, …) in the process registry,
 * once per process (they are read when scraped; nothing runs between scrapes).
 */
export function collectProcessMetrics(): void {
  if (metricsRegistry.getSingleMetric('process_cpu_user_seconds_total') !== undefined) return;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** The route label of a request nothing routed (404s, probes of random paths). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route template that served a request (`/conversations/:conversation_id/tracker`), never
 * the raw path, so the label set stays bounded whatever clients send.
 */
export function routeTemplateOf(req: Request): string {
  const route = (req as unknown as { route?: { path?: unknown } }).route;
  if (route === undefined || typeof route.path !== 'string') return UNMATCHED_ROUTE;
  return `${req.baseUrl ?? ''}${route.path}` || '/';
}

/** HTTP methods kept as they are in the `method` label; anything else is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Express middleware: `http_request_duration_seconds{method,route,status_code}` of every
 * request, observed when the response is finished (or the connection closed before).
 */
export function httpMetricsMiddleware(): (req: Request, res: Response, next: NextFunction) => void {
  const duration = histogram(
    'http_request_duration_seconds',
    'Duration of HTTP requests, by method, route template and status code',
    ['method', 'route', 'status_code'],
  );
  return (req, res, next) => {
    const end = duration.startTimer();
    let done = false;
    const observe = (): void => {
      if (done) return;
      done = true;
      end({
        method: METHODS.has(req.method) ? req.method : 'other',
        route: routeTemplateOf(req),
        status_code: String(res.statusCode),
      });
    };
    res.once('finish', observe);
    res.once('close', observe);
    next();
  };
}
