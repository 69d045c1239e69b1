import pino, { type LoggerOptions } from 'pino';
import { REDACTED, isSecretKey, redactLogValue, redactText } from './redact';

/** Keys of a log object that their own serializer redacts (pino-http's request objects). */
const SERIALIZED_KEYS = new Set(['req', 'res', 'err']);

/** An error as a plain object (message, stack, own fields) with every credential hidden. */
export function redactError(error: unknown): unknown {
  const serialized: unknown = pino.stdSerializers.err(error as Error);
  if (serialized === null || typeof serialized !== 'object') return redactLogValue(serialized);
  try {
    return redactLogValue(JSON.parse(JSON.stringify(serialized)));
  } catch {
    const { type, message, stack } = serialized as Record<string, unknown>;
    return redactLogValue({ type, message, stack });
  }
}

/**
 * pino options every logger of the process starts from: the level, and credentials hidden in
 * every line — in the logged object (strings, credential keys; errors through `err`) and in the
 * message and its format arguments. See `redact.ts` for what counts as a credential.
 */
export function baseLoggerOptions(level: string): LoggerOptions {
  return {
    level,
    formatters: {
      log(object: Record<string, unknown>): Record<string, unknown> {
        let copy: Record<string, unknown> | null = null;
        for (const key of Object.keys(object)) {
          if (SERIALIZED_KEYS.has(key)) continue;
          const value = object[key];
          const next =
            isSecretKey(key) && value !== null && value !== undefined && value !== ''
              ? REDACTED
              : redactLogValue(value);
          if (next !== value) {
            copy ??= { ...object };
            copy[key] = next;
          }
        }
        return copy ?? object;
      },
    },
    hooks: {
      logMethod(args, method) {
        const redacted = args.map((arg: unknown) =>
          typeof arg === 'string' ? redactText(arg) : arg,
        ) as Parameters<typeof method>;
        method.apply(this, redacted);
      },
    },
    serializers: { err: redactError },
  };
}
