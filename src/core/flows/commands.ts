/**
 * CALM commands as they travel in `parse_data.commands` (each `as_dict()`: the fields plus
 * `"command": <name>`). Generators produce them, the command processor turns them into stack and
 * slot changes.
 */

export type SetSlotExtractor = 'LLM' | 'NLU' | 'CommandPayloadReader';

export type Command =
  | { readonly command: 'start flow'; readonly flow: string }
  | {
      readonly command: 'set slot';
      readonly name: string;
      readonly value: unknown;
      readonly extractor: SetSlotExtractor;
    }
  | { readonly command: 'cancel flow' }
  | { readonly command: 'clarify'; readonly options: readonly string[] }
  | { readonly command: 'chitchat' }
  | { readonly command: 'knowledge' }
  | { readonly command: 'human handoff' }
  | { readonly command: 'skip question' }
  | {
      readonly command: 'correct slot';
      readonly corrected_slots: readonly {
        readonly name: string;
        readonly value: unknown;
        readonly filled_by?: string | null;
      }[];
    }
  | { readonly command: 'cannot handle'; readonly reason: string | null }
  | { readonly command: 'repeat' }
  | { readonly command: 'restart' }
  | { readonly command: 'session start' }
  | { readonly command: 'session end' }
  | {
      readonly command: 'error';
      readonly error_type: string;
      readonly info: Record<string, unknown>;
    }
  | { readonly command: 'handle code change' }
  | { readonly command: 'noop' };

export type CommandName = Command['command'];

/** `cannot handle` reasons of the classic patterns. */
export const CANNOT_HANDLE_DEFAULT = 'cannot_handle_default';
export const CANNOT_HANDLE_CHITCHAT = 'cannot_handle_chitchat';
export const CANNOT_HANDLE_NOT_SUPPORTED = 'cannot_handle_not_supported';
export const CANNOT_HANDLE_NO_RELEVANT_ANSWER = 'cannot_handle_no_relevant_answer';

/** `error` types. */
export const INTERNAL_ERROR_DEFAULT = 'rasa_internal_error_default';
export const USER_INPUT_EMPTY = 'rasa_internal_error_user_input_empty';
export const USER_INPUT_TOO_LONG = 'rasa_internal_error_user_input_too_long';
