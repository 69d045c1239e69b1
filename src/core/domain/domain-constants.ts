/** Rasa 3.x names built into every domain (rasa/shared/core/constants.py, OSS 3.x). */

export const ACTION_LISTEN_NAME = 'action_listen';
export const ACTION_RESTART_NAME = 'action_restart';
export const ACTION_SESSION_START_NAME = 'action_session_start';
export const ACTION_DEFAULT_FALLBACK_NAME = 'action_default_fallback';
export const ACTION_DEACTIVATE_LOOP_NAME = 'action_deactivate_loop';
export const ACTION_REVERT_FALLBACK_EVENTS_NAME = 'action_revert_fallback_events';
export const ACTION_DEFAULT_ASK_AFFIRMATION_NAME = 'action_default_ask_affirmation';
export const ACTION_DEFAULT_ASK_REPHRASE_NAME = 'action_default_ask_rephrase';
export const ACTION_TWO_STAGE_FALLBACK_NAME = 'action_two_stage_fallback';
export const ACTION_UNLIKELY_INTENT_NAME = 'action_unlikely_intent';
export const ACTION_BACK_NAME = 'action_back';
/**
 * Rasa Pro's voice `action_hangup`. Not one of Rasa 3.x's default actions (their order drives
 * featurisation), so a domain lists it under `actions:` to use it.
 */
export const ACTION_HANGUP_NAME = 'action_hangup';
export const ACTION_SEND_TEXT_NAME = 'action_send_text';
/** The `...` placeholder action of rule snippets. */
export const RULE_SNIPPET_ACTION_NAME = '...';
export const ACTION_EXTRACT_SLOTS = 'action_extract_slots';
/** The custom action that validates slots set by `action_extract_slots` (rasa-sdk `ValidationAction`). */
export const ACTION_VALIDATE_SLOT_MAPPINGS = 'action_validate_slot_mappings';
export const DEFAULT_KNOWLEDGE_BASE_ACTION = 'action_query_knowledge_base';

/** Rasa's `DEFAULT_ACTION_NAMES`, in Rasa's order (index 0 is always `action_listen`). */
export const DEFAULT_ACTION_NAMES: readonly string[] = [
  ACTION_LISTEN_NAME,
  ACTION_RESTART_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_DEFAULT_FALLBACK_NAME,
  ACTION_DEACTIVATE_LOOP_NAME,
  ACTION_REVERT_FALLBACK_EVENTS_NAME,
  ACTION_DEFAULT_ASK_AFFIRMATION_NAME,
  ACTION_DEFAULT_ASK_REPHRASE_NAME,
  ACTION_TWO_STAGE_FALLBACK_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
  ACTION_BACK_NAME,
  ACTION_SEND_TEXT_NAME,
  RULE_SNIPPET_ACTION_NAME,
  ACTION_EXTRACT_SLOTS,
];

export const USER_INTENT_RESTART = 'restart';
export const USER_INTENT_BACK = 'back';
export const USER_INTENT_OUT_OF_SCOPE = 'out_of_scope';
export const USER_INTENT_SESSION_START = 'session_start';
export const DEFAULT_NLU_FALLBACK_INTENT_NAME = 'nlu_fallback';

/** Intents every domain knows (`DEFAULT_INTENTS`). */
export const DEFAULT_INTENTS: readonly string[] = [
  USER_INTENT_RESTART,
  USER_INTENT_BACK,
  USER_INTENT_OUT_OF_SCOPE,
  USER_INTENT_SESSION_START,
  DEFAULT_NLU_FALLBACK_INTENT_NAME,
];

export const REQUESTED_SLOT = 'requested_slot';
export const SESSION_START_METADATA_SLOT = 'session_started_metadata';
export const SLOT_LISTED_ITEMS = 'knowledge_base_listed_objects';
export const SLOT_LAST_OBJECT = 'knowledge_base_last_object';
export const SLOT_LAST_OBJECT_TYPE = 'knowledge_base_last_object_type';

/** Value categorical slots map unseen values to. */
export const DEFAULT_CATEGORICAL_SLOT_VALUE = '__other__';

/** Separator of entity label and role/group label in featurised entity names. */
export const ENTITY_LABEL_SEPARATOR = '#';

export const DEFAULT_SESSION_EXPIRATION_TIME_IN_MINUTES = 60;
export const DEFAULT_CARRY_OVER_SLOTS_TO_NEW_SESSION = true;
/** `version` written into domain and story files. */
export const LATEST_TRAINING_DATA_FORMAT_VERSION = '3.1';
