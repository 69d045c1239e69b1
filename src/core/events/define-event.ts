import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type EventBaseInit, type JsonObject } from 'src/core/events/event-base';
import { type SerializedEvent } from 'src/core/events/serialized-event';
import { type TrackerState } from 'src/core/events/tracker-state';
import { type UserUttered } from 'src/core/events/user-uttered';

/**
 * A kind's branch of Rasa's `EVENTS_SCHEMA` without the `event` property (the catalogue adds
 * `event: { const: <wire name> }` first): JSON-schema `properties` of its own fields, and which
 * of them are `required`.
 */
export interface EventSchemaBranch {
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
}

/** Builds an event from its wire dict; `base` holds its checked timestamp and metadata. */
export type EventDecoder<E extends DialogueEvent> = (
  raw: JsonObject,
  base: EventBaseInit,
  newId: () => string,
) => E;

/** The entities and featurisation a user message of a story ends up with. */
export interface StoryUserTurn {
  readonly entities: readonly JsonObject[];
  readonly useTextForFeaturization: boolean | null;
}

/** What catalogue entries need from the story writer to write their steps. */
export interface StoryContext {
  /**
   * The turn of a user message of the story (`entities` and `user_featurization` events right
   * after it change it), or undefined when unknown.
   */
  userTurn(event: UserUttered): StoryUserTurn | undefined;
  /** The text of a user step with its entities annotated, as the story writes it. */
  userText(text: string, entities: readonly JsonObject[]): unknown;
}

/**
 * One event kind of the catalogue: everything the codec, the schema, the tracker and the story
 * writer need to know about it. Functions are shared (one per kind, never built per event).
 */
export interface EventKind<E extends DialogueEvent> {
  /** The wire name (`event`), which is also the union's discriminant. */
  readonly type: E['type'];
  /** Rasa's `from_parameters`; throws `EVENTS.INVALID` for a dict that cannot be built. */
  readonly decode: EventDecoder<E>;
  /**
   * Rasa's `as_dict()`: writes the kind's own keys, in Rasa's order, into `d`, which holds
   * `event`, `timestamp` and (when non-empty) `metadata` already. Absent: no keys of its own.
   */
  readonly encode?: (e: E, d: SerializedEvent) => void;
  /** The kind's branch of `EVENTS_SCHEMA`; absent: only `event` is constrained. */
  readonly schema?: EventSchemaBranch;
  /**
   * Older wire names read as this kind (written back under `type`): their decoder, the kind's
   * own when absent. In `EVENTS_SCHEMA` each comes just before the kind, constraining only
   * `event`.
   */
  readonly legacyNames?: Readonly<Record<string, { readonly decode?: EventDecoder<E> }>>;
  /** How the event changes the tracker's state; absent: it does not. */
  readonly apply?: (e: E, state: TrackerState) => void;
  /** Its step in a test story (null to skip this one); absent: never part of stories. */
  readonly story?: (e: E, story: StoryContext) => JsonObject | null;
  /**
   * The event-store column its wire dict fills: `intent` (from `parse_data.intent.name`) or
   * `action` (from `name`).
   */
  readonly storeColumn?: 'intent' | 'action';
  /** A canonical wire dict of the kind (Rasa's `as_dict()`), used by the catalogue's specs. */
  readonly example: SerializedEvent;
}

/** A catalogue entry; the explicit type argument ties it to its member of `DialogueEvent`. */
export function defineEvent<E extends DialogueEvent>(kind: EventKind<E>): EventKind<E> {
  return kind;
}
