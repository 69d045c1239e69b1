import { defineEvent } from 'src/core/events/define-event';
import {
  eventBase,
  type EventBase,
  type EventBaseInit,
  type JsonObject,
} from 'src/core/events/event-base';
import {
  ENTITIES_SCHEMA,
  INTENT_SCHEMA,
  RANKING_SCHEMA,
  RESPONSE_SCHEMA,
} from 'src/core/events/event-schema-parts';
import { isJsonObject, optionalString } from 'src/core/events/json-values';
import { entityList, invalidEvent } from 'src/core/events/wire-fields';

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
  /** Metadata added to `is_external` (a fired reminder's mark). */
  readonly metadata?: JsonObject;
}): UserUttered {
  return userUttered({
    text: `${EXTERNAL_MESSAGE_PREFIX}${init.intentName}`,
    intent: { name: init.intentName },
    entities: init.entities ?? [],
    inputChannel: init.inputChannel ?? null,
    metadata: { [IS_EXTERNAL]: true, ...init.metadata },
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

export const USER_UTTERED_KIND = defineEvent<UserUttered>({
  type: 'user',
  decode: (raw, base) => {
    const parseData = raw.parse_data ?? {};
    if (!isJsonObject(parseData)) invalidEvent("User event 'parse_data' must be an object.", raw);
    const intent = parseData.intent;
    if (intent !== undefined && intent !== null && !isJsonObject(intent)) {
      invalidEvent("User event 'parse_data.intent' must be an object.", raw);
    }
    return userUttered({
      ...base,
      text: optionalString(raw.text),
      intent: isJsonObject(intent) ? intent : {},
      entities: entityList(parseData.entities, "User event 'parse_data.entities'", raw),
      parseData,
      inputChannel: optionalString(raw.input_channel),
      messageId: optionalString(raw.message_id),
    });
  },
  encode: (e, d) => {
    d.text = e.text;
    d.parse_data = e.parseData;
    d.input_channel = e.inputChannel;
    d.message_id = e.messageId;
    // Always written: already in place after `timestamp` when non-empty, else the last key
    // (Python's `dict.update` keeps the position of a key already present).
    d.metadata = e.metadata;
  },
  schema: {
    properties: {
      text: { type: ['string', 'null'] },
      input_channel: { type: ['string', 'null'] },
      message_id: { type: ['string', 'null'] },
      parse_data: {
        type: 'object',
        properties: {
          text: { type: ['string', 'null'] },
          intent_ranking: { type: 'array', items: INTENT_SCHEMA },
          intent: INTENT_SCHEMA,
          entities: ENTITIES_SCHEMA,
          response_selector: {
            type: 'object',
            oneOf: [
              { properties: { all_retrieval_intents: { type: 'array' } } },
              {
                patternProperties: {
                  '[\\w/]': {
                    type: 'object',
                    properties: { response: RESPONSE_SCHEMA, ranking: RANKING_SCHEMA },
                  },
                },
              },
            ],
          },
        },
      },
    },
  },
  apply: (e, state) => {
    state.latestUser = e;
    state.latestUserEntities = [...e.entities];
    state.latestUserUseText = e.useTextForFeaturization;
    state.followup = null;
  },
  story: (e, story) => {
    const turn = story.userTurn(e);
    const step: JsonObject = {};
    const useText = turn ? turn.useTextForFeaturization : e.useTextForFeaturization;
    const intent = intentNameOf(e);
    if (intent && !useText) step.intent = fullRetrievalIntentNameOf(e) ?? intent;
    if (e.text) step.user = story.userText(e.text, turn?.entities ?? e.entities);
    // Rasa Pro writes the commands of a CALM turn under the user step.
    const commands = e.parseData.commands;
    if (Array.isArray(commands) && commands.length > 0) step.commands = commands;
    return Object.keys(step).length > 0 ? step : null;
  },
  storeColumn: 'intent',
  example: {
    event: 'user',
    timestamp: 1700000000.5,
    text: 'hello Berlin',
    parse_data: {
      intent: { name: 'greet', confidence: 0.9 },
      entities: [{ entity: 'city', value: 'Berlin', start: 6, end: 12 }],
      text: 'hello Berlin',
      message_id: 'm1',
      metadata: {},
    },
    input_channel: 'rest',
    message_id: 'm1',
    metadata: {},
  },
});
