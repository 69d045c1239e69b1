import { unwrapResolverError } from '@apollo/server/errors';
import { Logger } from '@nestjs/common';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { randomUUID } from 'node:crypto';
import { DialogueError } from 'src/core';
import { isDatabaseUnavailable } from 'src/platform/database/database-errors';
import { ERROR_MAP } from 'src/platform/errors/error-map';
import { DATABASE_UNAVAILABLE_MESSAGE } from 'src/platform/errors/failure-of';

/** Codes whose message is meant for the caller; anything else is masked. */
const EXPOSED_CODES = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'NOT_FOUND',
  'CONFLICT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'QUERY_TOO_COMPLEX',
]);

const logger = new Logger('GraphQL');

/** A variable that does not fit its declared type (Apollo leaves some without a code). */
function isVariableError(error: unknown): boolean {
  return (
    error instanceof GraphQLError &&
    error.path === undefined &&
    /^Variable "\$\w+" (got invalid value|has invalid value|of required type|of non-null type)/.test(
      error.message,
    )
  );
}

/**
 * The one place GraphQL errors are shaped: DialogueErrors get the `extensions.code` of the error
 * map plus `reason` (the stable error code) and their details; known Apollo/GraphQL codes pass
 * with only their code; anything else becomes INTERNAL_SERVER_ERROR with an error id that is in
 * the log. No stack trace, `originalError` or exception internals ever leave.
 */
export function formatGraphqlError(
  formatted: GraphQLFormattedError,
  error: unknown,
): GraphQLFormattedError {
  const where = {
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
  };
  const original = unwrapResolverError(error);
  if (original instanceof DialogueError) {
    return {
      message: original.message,
      ...where,
      extensions: {
        code: ERROR_MAP[original.code].graphql,
        reason: original.code,
        ...(Object.keys(original.details).length > 0 ? { details: original.details } : {}),
      },
    };
  }
  // The database is unreachable: the operation was not carried out, retry later (as REST's 503).
  if (isDatabaseUnavailable(original)) {
    return {
      message: DATABASE_UNAVAILABLE_MESSAGE,
      ...where,
      extensions: {
        code: ERROR_MAP['DATABASE.UNAVAILABLE'].graphql,
        reason: 'DATABASE.UNAVAILABLE',
      },
    };
  }
  const code = formatted.extensions?.code;
  if (isVariableError(original)) {
    return { message: formatted.message, ...where, extensions: { code: 'BAD_USER_INPUT' } };
  }
  // An operationName the document does not define is a mistake of the caller's input.
  if (code === 'OPERATION_RESOLUTION_FAILURE') {
    return { message: formatted.message, ...where, extensions: { code: 'BAD_USER_INPUT' } };
  }
  if (typeof code === 'string' && EXPOSED_CODES.has(code)) {
    return { message: formatted.message, ...where, extensions: { code } };
  }
  const errorId = randomUUID();
  logger.error({
    msg: 'GraphQL operation failed',
    errorId,
    error: original instanceof Error ? original.stack : String(original),
  });
  return {
    message: 'Internal server error',
    ...where,
    extensions: { code: 'INTERNAL_SERVER_ERROR', errorId },
  };
}
