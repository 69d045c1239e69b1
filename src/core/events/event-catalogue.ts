import { ACTION_EXECUTED_KIND } from 'src/core/events/action-executed';
import { ACTION_EXECUTION_REJECTED_KIND } from 'src/core/events/action-execution-rejected';
import { ACTION_REVERTED_KIND } from 'src/core/events/action-reverted';
import { ACTIVE_LOOP_KIND } from 'src/core/events/active-loop';
import { AGENT_CANCELLED_KIND } from 'src/core/events/agent-cancelled';
import { AGENT_COMPLETED_KIND } from 'src/core/events/agent-completed';
import { AGENT_INTERRUPTED_KIND } from 'src/core/events/agent-interrupted';
import { AGENT_RESUMED_KIND } from 'src/core/events/agent-resumed';
import { AGENT_STARTED_KIND } from 'src/core/events/agent-started';
import { AGENT_UTTERED_KIND } from 'src/core/events/agent-uttered';
import { ALL_SLOTS_RESET_KIND } from 'src/core/events/all-slots-reset';
import { BOT_UTTERED_KIND } from 'src/core/events/bot-uttered';
import { CONVERSATION_PAUSED_KIND } from 'src/core/events/conversation-paused';
import { CONVERSATION_RESUMED_KIND } from 'src/core/events/conversation-resumed';
import { type EventDecoder, type EventKind } from 'src/core/events/define-event';
import { DEFINE_PREV_USER_UTTERED_FEATURIZATION_KIND } from 'src/core/events/define-prev-user-uttered-featurization';
import {
  type DialogueEvent,
  type DialogueEventOf,
  type DialogueEventType,
} from 'src/core/events/dialogue-event';
import { DIALOGUE_STACK_UPDATED_KIND } from 'src/core/events/dialogue-stack-updated';
import { ENTITIES_ADDED_KIND } from 'src/core/events/entities-added';
import { ERROR_HANDLED_KIND } from 'src/core/events/error-handled';
import { FLOW_CANCELLED_KIND } from 'src/core/events/flow-cancelled';
import { FLOW_COMPLETED_KIND } from 'src/core/events/flow-completed';
import { FLOW_INTERRUPTED_KIND } from 'src/core/events/flow-interrupted';
import { FLOW_RESUMED_KIND } from 'src/core/events/flow-resumed';
import { FLOW_STARTED_KIND } from 'src/core/events/flow-started';
import { FOLLOWUP_ACTION_KIND } from 'src/core/events/followup-action';
import { LOOP_INTERRUPTED_KIND } from 'src/core/events/loop-interrupted';
import { REMINDER_CANCELLED_KIND } from 'src/core/events/reminder-cancelled';
import { REMINDER_SCHEDULED_KIND } from 'src/core/events/reminder-scheduled';
import { RESTARTED_KIND } from 'src/core/events/restarted';
import { ROUTING_SESSION_ENDED_KIND } from 'src/core/events/routing-session-ended';
import { SESSION_ENDED_KIND } from 'src/core/events/session-ended';
import { SESSION_STARTED_KIND } from 'src/core/events/session-started';
import { SLOT_SET_KIND } from 'src/core/events/slot-set';
import { STORY_EXPORTED_KIND } from 'src/core/events/story-exported';
import { USER_UTTERANCE_REVERTED_KIND } from 'src/core/events/user-utterance-reverted';
import { USER_UTTERED_KIND } from 'src/core/events/user-uttered';

/**
 * Every event kind, keyed by wire name, in the order of Rasa's `EVENTS_SCHEMA` (legacy names
 * come just before the kind that reads them). Codec, schema, tracker, story writer and event
 * encoder all read this table; adding an event kind is one entry here plus its file.
 *
 * The `satisfies` clause is the compile-time check: one entry per member of `DialogueEvent`, no
 * other key, and each entry typed by the member its key names.
 */
export const EVENT_CATALOGUE = {
  user: USER_UTTERED_KIND,
  action: ACTION_EXECUTED_KIND,
  slot: SLOT_SET_KIND,
  entities: ENTITIES_ADDED_KIND,
  user_featurization: DEFINE_PREV_USER_UTTERED_FEATURIZATION_KIND,
  cancel_reminder: REMINDER_CANCELLED_KIND,
  reminder: REMINDER_SCHEDULED_KIND,
  action_execution_rejected: ACTION_EXECUTION_REJECTED_KIND,
  loop_interrupted: LOOP_INTERRUPTED_KIND,
  active_loop: ACTIVE_LOOP_KIND,
  reset_slots: ALL_SLOTS_RESET_KIND,
  resume: CONVERSATION_RESUMED_KIND,
  pause: CONVERSATION_PAUSED_KIND,
  followup: FOLLOWUP_ACTION_KIND,
  export: STORY_EXPORTED_KIND,
  restart: RESTARTED_KIND,
  undo: ACTION_REVERTED_KIND,
  rewind: USER_UTTERANCE_REVERTED_KIND,
  bot: BOT_UTTERED_KIND,
  session_started: SESSION_STARTED_KIND,
  agent: AGENT_UTTERED_KIND,
  flow_started: FLOW_STARTED_KIND,
  flow_interrupted: FLOW_INTERRUPTED_KIND,
  flow_resumed: FLOW_RESUMED_KIND,
  flow_completed: FLOW_COMPLETED_KIND,
  flow_cancelled: FLOW_CANCELLED_KIND,
  agent_started: AGENT_STARTED_KIND,
  agent_completed: AGENT_COMPLETED_KIND,
  agent_interrupted: AGENT_INTERRUPTED_KIND,
  agent_resumed: AGENT_RESUMED_KIND,
  agent_cancelled: AGENT_CANCELLED_KIND,
  stack: DIALOGUE_STACK_UPDATED_KIND,
  routing_session_ended: ROUTING_SESSION_ENDED_KIND,
  session_ended: SESSION_ENDED_KIND,
  error: ERROR_HANDLED_KIND,
} satisfies { readonly [K in DialogueEventType]: EventKind<DialogueEventOf<K>> };

/**
 * A catalogue entry with its event type widened to the whole union, for code that dispatches on
 * `e.type` at run time. Sound as long as an entry only ever gets events of its own kind, which
 * `eventKind` and `wireDecoder` guarantee.
 */
export type AnyEventKind = EventKind<DialogueEvent>;

const KINDS = new Map<string, AnyEventKind>(
  Object.entries(EVENT_CATALOGUE) as unknown as [string, AnyEventKind][],
);

/** The catalogue entry of an event's kind (a map lookup; for hot paths). */
export function eventKind(type: DialogueEventType): AnyEventKind {
  return KINDS.get(type) as AnyEventKind;
}

/** Every kind's wire name, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as DialogueEventType[];

/** A wire name accepted on input besides the kinds: the legacy `form` and `form_validation`. */
export type LegacyEventName = 'form' | 'form_validation';

/** Names accepted on input: every kind plus the legacy names, in `EVENTS_SCHEMA` order. */
export const EVENT_NAMES: readonly (DialogueEventType | LegacyEventName)[] = [...KINDS].flatMap(
  ([type, kind]) => [...Object.keys(kind.legacyNames ?? {}), type],
) as (DialogueEventType | LegacyEventName)[];

const DECODERS = new Map<string, EventDecoder<DialogueEvent>>();
for (const [type, kind] of KINDS) {
  for (const [legacy, { decode }] of Object.entries(kind.legacyNames ?? {})) {
    DECODERS.set(legacy, decode ?? kind.decode);
  }
  DECODERS.set(type, kind.decode);
}

/** The decoder of a wire name (a kind or a legacy name); undefined for any other name. */
export function wireDecoder(name: string): EventDecoder<DialogueEvent> | undefined {
  return DECODERS.get(name);
}

/** Wire names whose dict fills an event-store column (see `EventKind.storeColumn`). */
export function kindsStoringColumn(column: 'intent' | 'action'): ReadonlySet<string> {
  return new Set(EVENT_TYPES.filter((type) => EVENT_CATALOGUE[type].storeColumn === column));
}
