/** Errors that only the transport layer raises (routing, body parsing, content negotiation). */
export type TransportErrorCode =
  | 'HTTP.NOT_FOUND'
  | 'HTTP.METHOD_NOT_ALLOWED'
  | 'HTTP.PAYLOAD_TOO_LARGE'
  | 'HTTP.HEADERS_TOO_LARGE'
  | 'HTTP.MALFORMED_BODY'
  | 'HTTP.UNSUPPORTED_MEDIA_TYPE'
  | 'HTTP.NOT_ACCEPTABLE'
  | 'HTTP.TIMEOUT'
  | 'HTTP.TOO_MANY_REQUESTS'
  | 'IDEMPOTENCY.IN_FLIGHT'
  | 'IDEMPOTENCY.KEY_REUSED'
  | 'INTERNAL';

/** Errors of the server's own dependencies (the database). */
export type PlatformErrorCode = 'DATABASE.UNAVAILABLE' | 'HEALTH.NOT_READY';

export type ErrorCode = DialogueErrorCode | TransportErrorCode | PlatformErrorCode;

export interface ErrorMapping {
  /** HTTP status of the REST failure body. */
  readonly http: number;
  /** `reason` of the REST failure body (Rasa's wording). */
  readonly reason: string;
  /** `extensions.code` on GraphQL. */
  readonly graphql: string;
  /** Close code for WebSocket sessions (4000 + HTTP status). */
  readonly wsClose: number;
  /** Documentation anchor for `help`. */
  readonly help: string | null;
}

const HTTP_API_HELP = 'https://rasa.com/docs/rasa/pages/http-api';
const SECURITY_HELP =
  'https://rasa.com/docs/rasa/user-guide/configuring-http-api/#security-considerations';

function m(
  http: number,
  reason: string,
  graphql: string,
  help: string | null = null,
): ErrorMapping {
  return { http, reason, graphql, wsClose: 4000 + http, help };
}

/**
 * The one table that maps every error code to each transport. Reasons follow Rasa's server so
 * that clients written against Rasa read our failures unchanged.
 */
export const ERROR_MAP: Readonly<Record<ErrorCode, ErrorMapping>> = {
  'EVENTS.INVALID': m(400, 'BadRequest', 'BAD_USER_INPUT', HTTP_API_HELP),
  'REQUEST.INVALID_PARAMETER': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'REQUEST.BODY_MISSING': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'TRACKER.CONVERSATION_NOT_FOUND': m(404, 'Not found', 'NOT_FOUND'),
  'TRACKER.CONVERSATION_ERROR': m(500, 'ConversationError', 'INTERNAL_SERVER_ERROR'),
  'TRACKER.WRITE_CONFLICT': m(409, 'Conflict', 'CONFLICT'),
  'MODEL.NOT_LOADED': m(409, 'Conflict', 'CONFLICT'),
  'MODEL.INVALID_ARCHIVE': m(400, 'LoadingError', 'BAD_USER_INPUT'),
  'MODEL.INCOMPATIBLE': m(400, 'LoadingError', 'BAD_USER_INPUT'),
  'MODEL.INVALID_NAME': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'MODEL.NOT_FOUND': m(400, 'BadRequest', 'BAD_USER_INPUT', HTTP_API_HELP),
  'MODEL.SERVER_ERROR': m(400, 'LoadingError', 'BAD_USER_INPUT', HTTP_API_HELP),
  'MODEL.REMOTE_STORAGE_UNAVAILABLE': m(400, 'BadRequest', 'BAD_USER_INPUT', HTTP_API_HELP),
  'MODEL.STORAGE_ERROR': m(400, 'LoadingError', 'BAD_USER_INPUT', HTTP_API_HELP),
  'DOMAIN.INVALID': m(400, 'InvalidDomainError', 'BAD_USER_INPUT'),
  'LOCK.TIMEOUT': m(503, 'LockError', 'SERVICE_UNAVAILABLE'),
  'LOCK.STORE_UNAVAILABLE': m(503, 'LockError', 'SERVICE_UNAVAILABLE'),
  'AUTH.NOT_AUTHENTICATED': m(401, 'NotAuthenticated', 'UNAUTHENTICATED'),
  'AUTH.NOT_AUTHORIZED': m(403, 'NotAuthorized', 'FORBIDDEN', SECURITY_HELP),
  'TRAINING_DATA.INVALID': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'CONFIG.INVALID': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'NLU.UNKNOWN_COMPONENT': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'NLU.UNSUPPORTED_COMPONENT': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'NLU.INVALID_PIPELINE': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'NLU.INVALID_MODEL': m(400, 'LoadingError', 'BAD_USER_INPUT'),
  'DIALOGUE.INVALID_RULE': m(400, 'BadRequest', 'BAD_USER_INPUT'),
  'DIALOGUE.UNKNOWN_ACTION': m(500, 'ConversationError', 'INTERNAL_SERVER_ERROR'),
  'DIALOGUE.UNKNOWN_INTENT': m(404, 'NotFound', 'NOT_FOUND'),
  'DIALOGUE.PREDICTION_ERROR': m(500, 'PredictionError', 'INTERNAL_SERVER_ERROR'),
  'DIALOGUE.TESTING_ERROR': m(500, 'TestingError', 'INTERNAL_SERVER_ERROR'),
  'DIALOGUE.NO_CORE_MODEL': m(500, 'ConversationError', 'INTERNAL_SERVER_ERROR'),
  'CONVERSATIONS.CONVERSATION_NOT_FOUND': m(404, 'NotFound', 'NOT_FOUND'),
  'CONVERSATIONS.TAG_NOT_FOUND': m(404, 'NotFound', 'NOT_FOUND'),
  'CONVERSATIONS.TAG_OF_OTHER_ASSISTANT': m(409, 'Conflict', 'BAD_USER_INPUT'),
  'HTTP.NOT_FOUND': m(404, 'NotFound', 'NOT_FOUND'),
  'HTTP.METHOD_NOT_ALLOWED': m(405, 'MethodNotAllowed', 'METHOD_NOT_ALLOWED'),
  'HTTP.PAYLOAD_TOO_LARGE': m(413, 'PayloadTooLarge', 'PAYLOAD_TOO_LARGE'),
  'HTTP.HEADERS_TOO_LARGE': m(431, 'RequestHeaderFieldsTooLarge', 'BAD_REQUEST'),
  'HTTP.MALFORMED_BODY': m(400, 'BadRequest', 'BAD_REQUEST'),
  'HTTP.UNSUPPORTED_MEDIA_TYPE': m(415, 'UnsupportedMediaType', 'BAD_REQUEST'),
  'HTTP.NOT_ACCEPTABLE': m(406, 'NotAcceptable', 'BAD_REQUEST'),
  'HTTP.TIMEOUT': m(503, 'Timeout', 'SERVICE_UNAVAILABLE'),
  'HTTP.TOO_MANY_REQUESTS': m(429, 'TooManyRequests', 'TOO_MANY_REQUESTS'),
  // draft-ietf-httpapi-idempotency-key-header: a request whose key is still being served → 409;
  // a key sent again with another payload → 422.
  'IDEMPOTENCY.IN_FLIGHT': m(409, 'Conflict', 'CONFLICT'),
  'IDEMPOTENCY.KEY_REUSED': m(422, 'UnprocessableEntity', 'BAD_USER_INPUT'),
  'DATABASE.UNAVAILABLE': m(503, 'ServiceUnavailable', 'SERVICE_UNAVAILABLE'),
  'HEALTH.NOT_READY': m(503, 'ServiceUnavailable', 'SERVICE_UNAVAILABLE'),
  INTERNAL: m(500, 'InternalServerError', 'INTERNAL_SERVER_ERROR'),
};
import { type DialogueErrorCode } from 'src/core';
