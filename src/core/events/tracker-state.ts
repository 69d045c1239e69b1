import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { type BotUttered } from 'src/core/events/bot-uttered';
import { type JsonObject } from 'src/core/events/event-base';
import { type UserUttered } from 'src/core/events/user-uttered';

/** The active loop (form) of a conversation (Rasa `TrackerActiveLoop`). */
export interface TrackerActiveLoop {
  readonly name: string | null;
  readonly isInterrupted: boolean;
  readonly rejected: boolean;
  /** Parse data of the user message that activated the loop. */
  readonly triggerMessage: Readonly<JsonObject> | null;
}

/** The latest action: `{ action_name }` or `{ action_text }`; `{}` before any action. */
export type LatestAction =
  { action_name: string } | { action_text: string } | Record<string, never>;

/**
 * The state of a conversation that events change: what a catalogue entry's `apply` reads and
 * writes. `DialogueStateTracker` holds the one implementation (its log is not part of it).
 */
export interface TrackerState {
  /** Values of the slots the domain defines; no other slot is ever set. */
  readonly slotValues: Map<string, unknown>;
  paused: boolean;
  followup: string | null;
  latestAction: LatestAction;
  /** The latest user message (an empty one after a reset). */
  latestUser: UserUttered;
  /** Its entities, plus those of `entities` events since. */
  latestUserEntities: readonly JsonObject[];
  /** Its featurisation flag, as `user_featurization` events since may change it. */
  latestUserUseText: boolean | null;
  latestBot: BotUttered | null;
  loop: TrackerActiveLoop | null;
  /** The dialogue stack (Rasa Pro): a list of frames. */
  stack: readonly unknown[];
  /** Name (or end-to-end text) of the latest action; null before any action. */
  readonly latestActionName: string | null;
  /** Name of the active loop; null when none (or the rule placeholder). */
  readonly activeLoopName: string | null;
  /** Sets the latest action, clearing the loop's interruption and, for its own action, rejection. */
  setLatestAction(action: LatestAction): void;
  /** Resets the slots `which` selects (all by default) to their initial values. */
  resetSlots(which?: (def: SlotDefinition) => boolean): void;
  /** Rasa `_reset`: the initial state. */
  reset(): void;
  /** Applies the tracker's applied events again, in order (after a `reset`). */
  replayAppliedEvents(): void;
}
