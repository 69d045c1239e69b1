/** Stable error codes of the dialogue engine. Transports map them in one table. */
export type DialogueErrorCode =
  | 'EVENTS.INVALID'
  | 'REQUEST.INVALID_PARAMETER'
  | 'REQUEST.BODY_MISSING'
  | 'TRACKER.CONVERSATION_NOT_FOUND'
  | 'TRACKER.CONVERSATION_ERROR'
  | 'TRACKER.WRITE_CONFLICT'
  | 'MODEL.NOT_LOADED'
  | 'MODEL.INVALID_ARCHIVE'
  | 'MODEL.INCOMPATIBLE'
  | 'MODEL.INVALID_NAME'
  | 'MODEL.NOT_FOUND'
  | 'MODEL.SERVER_ERROR'
  | 'MODEL.REMOTE_STORAGE_UNAVAILABLE'
  | 'MODEL.STORAGE_ERROR'
  | 'DOMAIN.INVALID'
  | 'LOCK.TIMEOUT'
  | 'LOCK.STORE_UNAVAILABLE'
  | 'AUTH.NOT_AUTHENTICATED'
  | 'AUTH.NOT_AUTHORIZED'
  | 'TRAINING_DATA.INVALID'
  | 'CONFIG.INVALID'
  | 'NLU.UNKNOWN_COMPONENT'
  | 'NLU.UNSUPPORTED_COMPONENT'
  | 'NLU.INVALID_PIPELINE'
  | 'NLU.INVALID_MODEL'
  | 'DIALOGUE.INVALID_RULE'
  | 'DIALOGUE.UNKNOWN_ACTION'
  | 'DIALOGUE.UNKNOWN_INTENT'
  | 'DIALOGUE.PREDICTION_ERROR'
  | 'DIALOGUE.TESTING_ERROR'
  | 'DIALOGUE.NO_CORE_MODEL'
  | 'CONVERSATIONS.CONVERSATION_NOT_FOUND'
  | 'CONVERSATIONS.TAG_NOT_FOUND'
  | 'CONVERSATIONS.TAG_OF_OTHER_ASSISTANT';

/**
 * `details` key of a temporary failure (`LOCK.STORE_UNAVAILABLE`): seconds after which a retry
 * may succeed. HTTP answers send it as the `Retry-After` header too.
 */
export const RETRY_AFTER_DETAIL = 'retry_after';

/** Base error of the core: a stable `code`, a human message and structured `details`. */
export class DialogueError extends Error {
  constructor(
    readonly code: DialogueErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DialogueError';
  }
}
