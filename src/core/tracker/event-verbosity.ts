/** Which events a tracker dump includes (Rasa `EventVerbosity`). */
export const EventVerbosity = {
  /** No events: `events` is `null`. */
  NONE: 'NONE',
  /** The events that make up the current state (reverted and restarted ones left out). */
  APPLIED: 'APPLIED',
  /** Every event after the latest `restart` (the default of the HTTP API). */
  AFTER_RESTART: 'AFTER_RESTART',
  /** Every event the tracker holds. */
  ALL: 'ALL',
} as const;

export type EventVerbosity = (typeof EventVerbosity)[keyof typeof EventVerbosity];

/**
 * The `include_events` query parameter: upper-cased before lookup; absent → `AFTER_RESTART`;
 * anything else (including the empty string) → `null` (Rasa answers 400).
 */
export function parseEventVerbosity(value: string | undefined): EventVerbosity | null {
  if (value === undefined) return EventVerbosity.AFTER_RESTART;
  const upper = value.toUpperCase();
  return Object.prototype.hasOwnProperty.call(EventVerbosity, upper)
    ? (upper as EventVerbosity)
    : null;
}
