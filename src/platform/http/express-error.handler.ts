import type { NextFunction, Request, Response } from 'express';
import { type AllExceptionsFilter } from 'src/platform/errors/all-exceptions.filter';
import { ApiError } from 'src/platform/errors/api-error';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  limit?: number;
}

/**
 * Express error middleware for errors raised before Nest's router (body parsing): they get the
 * same failure body as everything else instead of Express's HTML page.
 */
export function expressErrorHandler(filter: AllExceptionsFilter) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const e = err as HttpishError;
    const status = e.status ?? e.statusCode;
    let mapped: unknown = err;
    if (!(err instanceof ApiError) && typeof status === 'number') {
      if (status === 413) {
        mapped = new ApiError(
          'HTTP.PAYLOAD_TOO_LARGE',
          typeof e.limit === 'number'
            ? `The request body is larger than the server accepts on this route (${e.limit} bytes).`
            : 'The request body is larger than the server accepts.',
          typeof e.limit === 'number' ? { max_bytes: e.limit } : {},
        );
      } else if (status === 415) {
        mapped = new ApiError(
          'HTTP.UNSUPPORTED_MEDIA_TYPE',
          e.message ?? 'Unsupported media type.',
        );
      } else if (status >= 400 && status < 500) {
        mapped = new ApiError(
          'HTTP.MALFORMED_BODY',
          `The request body could not be read: ${e.message ?? e.type ?? 'bad request'}`,
        );
      }
    }
    const { body, headers } = filter.resolve(mapped, req);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(body.code).json(body);
  };
}
