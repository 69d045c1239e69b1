import { DialogueError } from 'src/core';
import { isDatabaseUnavailable } from 'src/platform/database/database-errors';
import { ApiError } from './api-error';
import { failureBody, type FailureBody } from './failure-body';

/** The message of the failure body for a request the database outage stopped. */
export const DATABASE_UNAVAILABLE_MESSAGE =
  'The database is unavailable; the request was not carried out. Retry later.';

/**
 * The failure body of an error raised while handling a message, for transports without an
 * HTTP response of their own (socket.io): known errors through the error table, anything else
 * as INTERNAL without its internals.
 */
export function failureOf(error: unknown): FailureBody {
  if (error instanceof DialogueError || error instanceof ApiError) {
    return failureBody(error.code, error.message, error.details);
  }
  if (isDatabaseUnavailable(error)) {
    return failureBody('DATABASE.UNAVAILABLE', DATABASE_UNAVAILABLE_MESSAGE);
  }
  return failureBody('INTERNAL', 'An unexpected error occurred.');
}
