import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';

/** Prefix of the text of an intent triggered from outside (`trigger_intent`, reminders). */
export const EXTERNAL_MESSAGE_PREFIX = 'EXTERNAL: ';
/** Metadata key marking an externally triggered user message. */
export const IS_EXTERNAL = 'is_external';

/** `user`: the user said something (Rasa `UserUttered`). */
export interface UserUttered extends EventBase {
  readonly type: 'user';
  readonly text: string | null;
  /** The predicted intent (`{}` when none), e.g. `{ name, confidence }`. */
  readonly intent: Readonly<JsonObject>;
  /** Entities found by NLU (before any `entities` event). */
  readonly entities: readonly JsonObject[];
  /**
   * The full parse data exactly as serialised: `intent, entities, text, message_id, metadata`
   * then NLU extras (`intent_ranking`, `response_selector`, `commands`, …).
   */
  readonly parseData: Readonly<JsonObject>;
  readonly inputChannel: string | null;
  readonly messageId: string | null;
  /** Whether the text (true) or the intent (false) featurises the turn; null when undecided. */
  readonly useTextForFeaturization: boolean | null;
}

export interface UserUtteredInit extends EventBaseInit {
  readonly text?: string | null;
  readonly intent?: JsonObject | null;
  readonly entities?: readonly JsonObject[] | null;
  /** NLU result; its keys override the derived `intent, entities, text, message_id, metadata`. */
  readonly parseData?: JsonObject | null;
  readonly inputChannel?: string | null;
  readonly messageId?: string | null;
  readonly useTextForFeaturization?: boolean | null;
}

/** Builds a `user` event the way Rasa's constructor does (parse data and featurisation flag). */
export function userUttered(init: UserUtteredInit): UserUttered {
  const base = eventBase(init);
  const text = init.text ?? null;
  const intent =
    isJsonObject(init.intent) && Object.keys(init.intent).length > 0 ? init.intent : {};
  const entities = init.entities && init.entities.length > 0 ? init.entities : [];
  const messageId = init.messageId ?? null;
  const name = intent.name;
  let useText = init.useTextForFeaturization ?? null;
  if (text && !name) useText = true;
  else if (name && !text) useText = false;
  const parseData: JsonObject = {
    intent,
    entities: [...entities],
    text,
    message_id: messageId,
    metadata: base.metadata,
    ...(init.parseData ?? {}),
  };
  return {
    type: 'user',
    ...base,
    text,
    intent,
    entities,
    parseData,
    inputChannel: init.inputChannel ?? null,
    messageId,
    useTextForFeaturization: useText,
  };
}

/** Rasa's `UserUttered.create_external`: the user event of an intent triggered from outside. */
export function externalUserUttered(init: {
  readonly intentName: string;
  readonly entities?: readonly JsonObject[];
  readonly inputChannel?: string | null;
  readonly timestamp: number;
}): UserUttered {
  return userUttered({
    text: `${EXTERNAL_MESSAGE_PREFIX}${init.intentName}`,
    intent: { name: init.intentName },
    entities: init.entities ?? [],
    inputChannel: init.inputChannel ?? null,
    metadata: { [IS_EXTERNAL]: true },
    timestamp: init.timestamp,
  });
}

/** The intent name of a user event, or null. */
export function intentNameOf(event: UserUttered): string | null {
  const name = event.intent.name;
  return typeof name === 'string' ? name : null;
}

/** The full retrieval intent name (`faq/ask_name`) of a user event, or null. */
export function fullRetrievalIntentNameOf(event: UserUttered): string | null {
  const name = event.intent.full_retrieval_intent_name;
  return typeof name === 'string' ? name : null;
}
