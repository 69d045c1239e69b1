/** A JSON object (parsed JSON, keys in insertion order). */
export type JsonObject = Record<string, unknown>;

/** Fields every event carries (Rasa `Event`). */
export interface EventBase {
  /** Seconds since the epoch, with a fraction. */
  readonly timestamp: number;
  /** Free metadata; `{}` when none. */
  readonly metadata: Readonly<JsonObject>;
}

/** What every event factory needs besides the kind's own fields. */
export interface EventBaseInit {
  readonly timestamp: number;
  readonly metadata?: JsonObject | null;
}

export function eventBase(init: EventBaseInit): EventBase {
  return { timestamp: init.timestamp, metadata: init.metadata ?? {} };
}
