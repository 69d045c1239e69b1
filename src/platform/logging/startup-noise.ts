import { type LoggerService } from '@nestjs/common';

/** Nest's start-up inventory (modules initialised, routes mapped): useful at debug only. */
const NOISY_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

function isStartupNoise(message: unknown, params: unknown[]): boolean {
  const context = params[params.length - 1];
  if (typeof context === 'string' && NOISY_CONTEXTS.has(context)) return true;
  return typeof message === 'string' && message.startsWith('Mapped {');
}

/**
 * The application logger with Nest's route-mapping and module-initialisation lines lowered
 * from info to debug; everything else passes through unchanged.
 */
export function withQuietStartup(inner: LoggerService): LoggerService {
  return {
    log: (message: unknown, ...params: unknown[]): void => {
      if (isStartupNoise(message, params)) inner.debug?.(message, ...params);
      else inner.log(message, ...params);
    },
    error: (message: unknown, ...params: unknown[]): void => {
      inner.error(message, ...params);
    },
    warn: (message: unknown, ...params: unknown[]): void => {
      inner.warn(message, ...params);
    },
    debug: (message: unknown, ...params: unknown[]): void => {
      inner.debug?.(message, ...params);
    },
    verbose: (message: unknown, ...params: unknown[]): void => {
      inner.verbose?.(message, ...params);
    },
    fatal: (message: unknown, ...params: unknown[]): void => {
      inner.fatal?.(message, ...params);
    },
  };
}
