import { type Domain } from 'src/core/domain/domain';
import {
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  SESSION_START_METADATA_SLOT,
} from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { isTruthy } from 'src/core/events/json-values';
import { sessionStarted } from 'src/core/events/session-started';
import { slotSet, type SlotSet } from 'src/core/events/slot-set';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/** Gap between the timestamps of consecutive session-start events (seconds). */
export const SESSION_START_TIMESTAMP_STEP = 0.001;

export interface SessionStartOptions {
  /** Timestamp of the first event; the following ones are `now + k * 0.001`. */
  readonly now: number;
  /** Slot events to carry into the new session (empty when carry-over is off). */
  readonly carriedSlots: readonly SlotSet[];
  /** Metadata put on every event (e.g. `model_id`, `assistant_id`). */
  readonly metadata?: JsonObject;
  /**
   * Channel metadata of the message that starts the session. When given (and non-empty), Rasa
   * first sets the `session_started_metadata` slot to it, and carries that slot over as well.
   */
  readonly sessionStartMetadata?: JsonObject | null;
  /** Whether slots are carried over (decides whether the metadata slot is carried too). */
  readonly carryOverSlots?: boolean;
}

/**
 * The events of Rasa's default `action_session_start` as the processor logs them:
 * [`slot(session_started_metadata)` when channel metadata is given,] `action(action_session_start)`
 * (confidence 1.0), `session_started`, the carried slot events (fresh copies), then
 * `action(action_listen)`. Timestamps strictly increase from `now`, so the order survives any
 * sort by time.
 */
export function sessionStartEvents(options: SessionStartOptions): DialogueEvent[] {
  let t = options.now;
  const next = (): number => {
    const current = t;
    t += SESSION_START_TIMESTAMP_STEP;
    return current;
  };
  const metadata = options.metadata ?? {};
  const events: DialogueEvent[] = [];
  const carried: SlotSet[] = [...options.carriedSlots];
  const channelMetadata = options.sessionStartMetadata;
  if (isTruthy(channelMetadata)) {
    const slot = slotSet({
      name: SESSION_START_METADATA_SLOT,
      value: channelMetadata,
      timestamp: next(),
      metadata,
    });
    events.push(slot);
    if (options.carryOverSlots ?? true) carried.push(slot);
  }
  events.push(
    actionExecuted({
      name: ACTION_SESSION_START_NAME,
      confidence: 1.0,
      timestamp: next(),
      metadata,
    }),
  );
  events.push(sessionStarted({ timestamp: next(), metadata }));
  for (const slot of carried) {
    // Rasa copies the old event (keeping its metadata) and stamps missing model ids.
    const merged: JsonObject = { ...slot.metadata };
    for (const [key, value] of Object.entries(metadata)) if (!(key in merged)) merged[key] = value;
    events.push(
      slotSet({ name: slot.name, value: slot.value, timestamp: next(), metadata: merged }),
    );
  }
  events.push(actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: next(), metadata }));
  return events;
}

/** The applied `slot` events of a tracker: what a new session carries over. */
export function slotsToCarryOver(tracker: DialogueStateTracker): SlotSet[] {
  return tracker.appliedEvents().filter((e): e is SlotSet => e.type === 'slot');
}

/**
 * The session-start events for `tracker` under `domain`'s session config (see
 * `sessionStartEvents`); they are returned, not applied.
 */
export function startSession(
  tracker: DialogueStateTracker,
  domain: Domain,
  now: number,
  metadata: JsonObject = {},
  sessionStartMetadata: JsonObject | null = null,
): DialogueEvent[] {
  const carryOverSlots = domain.sessionConfig.carryOverSlots;
  return sessionStartEvents({
    now,
    carriedSlots: carryOverSlots ? slotsToCarryOver(tracker) : [],
    metadata,
    sessionStartMetadata,
    carryOverSlots,
  });
}

/**
 * Whether the latest session expired at `now`: sessions are enabled (expiration time > 0) and
 * the latest applied user message is older than the expiration time.
 */
export function hasSessionExpired(
  tracker: DialogueStateTracker,
  domain: Domain,
  now: number,
): boolean {
  const minutes = domain.sessionConfig.sessionExpirationTime;
  if (!(minutes > 0)) return false;
  const user = tracker.lastEventOf('user');
  if (!user) return false;
  return (now - user.timestamp) / 60 > minutes;
}

/** Rasa's rule before handling a message: start a session when nothing is applied or it expired. */
export function needsSessionStart(
  tracker: DialogueStateTracker,
  domain: Domain,
  now: number,
): boolean {
  return tracker.appliedEvents().length === 0 || hasSessionExpired(tracker, domain, now);
}
