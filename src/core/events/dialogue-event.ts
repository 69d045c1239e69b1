import { type ActionExecuted } from 'src/core/events/action-executed';
import { type ActionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { type ActionReverted } from 'src/core/events/action-reverted';
import { type ActiveLoop } from 'src/core/events/active-loop';
import { type AgentCancelled } from 'src/core/events/agent-cancelled';
import { type AgentCompleted } from 'src/core/events/agent-completed';
import { type AgentInterrupted } from 'src/core/events/agent-interrupted';
import { type AgentResumed } from 'src/core/events/agent-resumed';
import { type AgentStarted } from 'src/core/events/agent-started';
import { type AgentUttered } from 'src/core/events/agent-uttered';
import { type AllSlotsReset } from 'src/core/events/all-slots-reset';
import { type BotUttered } from 'src/core/events/bot-uttered';
import { type ConversationPaused } from 'src/core/events/conversation-paused';
import { type ConversationResumed } from 'src/core/events/conversation-resumed';
import { type DefinePrevUserUtteredFeaturization } from 'src/core/events/define-prev-user-uttered-featurization';
import { type DialogueStackUpdated } from 'src/core/events/dialogue-stack-updated';
import { type EntitiesAdded } from 'src/core/events/entities-added';
import { type ErrorHandled } from 'src/core/events/error-handled';
import { type FlowCancelled } from 'src/core/events/flow-cancelled';
import { type FlowCompleted } from 'src/core/events/flow-completed';
import { type FlowInterrupted } from 'src/core/events/flow-interrupted';
import { type FlowResumed } from 'src/core/events/flow-resumed';
import { type FlowStarted } from 'src/core/events/flow-started';
import { type FollowupAction } from 'src/core/events/followup-action';
import { type LoopInterrupted } from 'src/core/events/loop-interrupted';
import { type ReminderCancelled } from 'src/core/events/reminder-cancelled';
import { type ReminderScheduled } from 'src/core/events/reminder-scheduled';
import { type Restarted } from 'src/core/events/restarted';
import { type RoutingSessionEnded } from 'src/core/events/routing-session-ended';
import { type SessionEnded } from 'src/core/events/session-ended';
import { type SessionStarted } from 'src/core/events/session-started';
import { type SlotSet } from 'src/core/events/slot-set';
import { type StoryExported } from 'src/core/events/story-exported';
import { type UserUtteranceReverted } from 'src/core/events/user-utterance-reverted';
import { type UserUttered } from 'src/core/events/user-uttered';

/**
 * Every Rasa 3.x event kind (plus the Rasa Pro ones), discriminated on `type`, which holds the
 * wire name (`event`). Events are immutable values; the tracker changes only by applying them.
 * Each member has its entry in `EVENT_CATALOGUE` (event-catalogue.ts), which checks at compile
 * time that it covers exactly these members.
 */
export type DialogueEvent =
  | UserUttered
  | DefinePrevUserUtteredFeaturization
  | EntitiesAdded
  | BotUttered
  | SlotSet
  | AllSlotsReset
  | Restarted
  | UserUtteranceReverted
  | ActionReverted
  | SessionStarted
  | ActionExecuted
  | ActionExecutionRejected
  | ActiveLoop
  | LoopInterrupted
  | FollowupAction
  | ConversationPaused
  | ConversationResumed
  | ReminderScheduled
  | ReminderCancelled
  | StoryExported
  | AgentUttered
  | DialogueStackUpdated
  | FlowStarted
  | FlowInterrupted
  | FlowResumed
  | FlowCompleted
  | FlowCancelled
  | AgentStarted
  | AgentCompleted
  | AgentInterrupted
  | AgentResumed
  | AgentCancelled
  | RoutingSessionEnded
  | SessionEnded
  | ErrorHandled;

/** The wire name of an event kind. */
export type DialogueEventType = DialogueEvent['type'];

/** The event of one kind. */
export type DialogueEventOf<T extends DialogueEventType> = Extract<DialogueEvent, { type: T }>;

/** Names accepted on input: every kind plus the legacy `form` and `form_validation`. */
export { EVENT_NAMES } from 'src/core/events/event-catalogue';

/** A copy of `event` with other metadata (events are immutable). */
export function withMetadata<E extends DialogueEvent>(
  event: E,
  metadata: Record<string, unknown>,
): E {
  return { ...event, metadata };
}

/** A copy of `event` with another timestamp. */
export function withTimestamp<E extends DialogueEvent>(event: E, timestamp: number): E {
  return { ...event, timestamp };
}
