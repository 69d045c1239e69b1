import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LevelWithSilent } from 'pino';
import { type AppConfig, type LogLevel } from 'src/platform/config/app-config';

const ORDER: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * The level of the one line per HTTP request: info with LOG_REQUESTS=true, else debug. A 5xx
 * answer is logged at error either way (by the exception filter when no request logger runs).
 */
export function requestLogLevel(config: AppConfig): 'info' | 'debug' {
  return config.logRequests ? 'info' : 'debug';
}

/**
 * Whether request lines would be written at all. When they would not, no request logger is
 * mounted: even at a level that discards its lines, pino-http costs CPU on every request.
 */
export function requestLoggingEnabled(config: AppConfig): boolean {
  return ORDER.indexOf(config.logLevel) <= ORDER.indexOf(requestLogLevel(config));
}

/** pino-http's `customLogLevel`: the request level, error for failed requests. */
export function requestLevelOf(
  config: AppConfig,
): (req: IncomingMessage, res: ServerResponse, err?: Error) => LevelWithSilent {
  const level = requestLogLevel(config);
  return (_req, res, err) => (err !== undefined || res.statusCode >= 500 ? 'error' : level);
}
