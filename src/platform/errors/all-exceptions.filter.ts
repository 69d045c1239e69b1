import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { DialogueError, RETRY_AFTER_DETAIL } from 'src/core';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseUnavailable,
} from 'src/platform/database/database-errors';
import { allowedMethodsFor } from 'src/platform/http/route-methods';
import { redactUrl } from 'src/platform/logging/redact';
import { ApiError } from './api-error';
import { type ErrorCode } from './error-map';
import { failureBody, type FailureBody } from './failure-body';
import { DATABASE_UNAVAILABLE_MESSAGE } from './failure-of';

interface Resolved {
  body: FailureBody;
  headers: Record<string, string>;
}

/**
 * Turns every error that reaches Nest into Rasa's failure body. Known errors go through the
 * error table; anything else becomes a 500 with an error id that is logged with the stack —
 * the stack itself never reaches the client, and no credential of the URL reaches the log.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private lastUnavailableLog = 0;
  private suppressedUnavailable = 0;

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const { body, headers } = this.resolve(exception, req);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    // A 503 is always temporary: tell the client when to try again.
    if (body.code === 503 && !res.hasHeader('Retry-After')) {
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    }
    res.status(body.code).json(body);
  }

  resolve(exception: unknown, req: Request): Resolved {
    if (exception instanceof DialogueError) {
      const retryAfter = exception.details[RETRY_AFTER_DETAIL];
      return {
        body: failureBody(exception.code, exception.message, exception.details),
        headers: typeof retryAfter === 'number' ? { 'Retry-After': String(retryAfter) } : {},
      };
    }
    if (exception instanceof ApiError) {
      return {
        body: failureBody(exception.code, exception.message, exception.details),
        headers: exception.headers,
      };
    }
    if (exception instanceof HttpException) {
      return this.fromHttpException(exception, req);
    }
    if (isDatabaseUnavailable(exception)) {
      this.logDatabaseUnavailable(exception);
      return {
        body: failureBody('DATABASE.UNAVAILABLE', DATABASE_UNAVAILABLE_MESSAGE),
        headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      };
    }
    const errorId = randomUUID();
    this.logger.error(
      { err: exception, errorId, method: req.method, url: redactUrl(req.originalUrl) },
      'unhandled error',
    );
    return {
      body: failureBody('INTERNAL', `An unexpected error occurred. Error id: ${errorId}`, {
        errorId,
      }),
      headers: {},
    };
  }

  /** One line per second at most: an outage under load fails thousands of requests. */
  private logDatabaseUnavailable(exception: unknown): void {
    const now = Date.now();
    if (now - this.lastUnavailableLog < 1000) {
      this.suppressedUnavailable++;
      return;
    }
    this.logger.warn(
      { err: (exception as Error).message, suppressed: this.suppressedUnavailable },
      'database unavailable; answered 503',
    );
    this.lastUnavailableLog = now;
    this.suppressedUnavailable = 0;
  }

  private fromHttpException(exception: HttpException, req: Request): Resolved {
    const status = exception.getStatus();
    if (status === 404) {
      const allowed = allowedMethodsFor(req);
      if (allowed.length > 0 && !allowed.includes(req.method)) {
        return {
          body: failureBody(
            'HTTP.METHOD_NOT_ALLOWED',
            `Method ${req.method} is not allowed for ${req.path}. Allowed: ${allowed.join(', ')}.`,
            { allowed },
          ),
          headers: { Allow: allowed.join(', ') },
        };
      }
      return {
        body: failureBody('HTTP.NOT_FOUND', `Requested URL ${req.path} not found.`),
        headers: {},
      };
    }
    const code: ErrorCode =
      status === 413
        ? 'HTTP.PAYLOAD_TOO_LARGE'
        : status === 405
          ? 'HTTP.METHOD_NOT_ALLOWED'
          : status === 406
            ? 'HTTP.NOT_ACCEPTABLE'
            : status === 401
              ? 'AUTH.NOT_AUTHENTICATED'
              : status === 403
                ? 'AUTH.NOT_AUTHORIZED'
                : status >= 500
                  ? 'INTERNAL'
                  : 'REQUEST.INVALID_PARAMETER';
    const response = exception.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response
        ? JSON.stringify(response.message).replace(/^"|"$/g, '')
        : exception.message;
    return { body: { ...failureBody(code, message), code: status }, headers: {} };
  }
}
