import { type JsonObject } from 'src/core/events/event-base';
import { type EventVerbosity } from 'src/core/tracker/event-verbosity';

/**
 * The typed commands the runtime runs. The HTTP layer parses request bodies and query
 * parameters into them (and answers 400 for what does not parse); the runtime trusts their
 * shape and checks what needs the conversation or the assistant (an unknown intent, a missing
 * conversation).
 */

/** Where a turn's bot messages go: `latest`, a configured channel's name, or null (collect). */
export type OutputChannelName = string | null;

/** `POST /conversations/{id}/trigger_intent`: an intent stands in for a user message. */
export interface TriggerIntentCommand {
  readonly conversationId: string;
  readonly intent: string;
  readonly entities: JsonObject[];
  readonly outputChannel: OutputChannelName;
  readonly verbosity: EventVerbosity;
}

/** `POST /conversations/{id}/execute`: runs the named action, then the prediction loop. */
export interface ExecuteActionCommand {
  readonly conversationId: string;
  readonly action: string;
  readonly policy: string | null;
  readonly confidence: number | null;
  readonly outputChannel: OutputChannelName;
  readonly verbosity: EventVerbosity;
}

/** `POST /conversations/{id}/tracker/events`: events (already checked against Rasa's event schema) appended to the conversation. */
export interface AppendEventsCommand {
  readonly conversationId: string;
  readonly events: readonly Record<string, unknown>[];
  readonly verbosity: EventVerbosity;
  /** `execute_side_effects`: posted bot messages are sent, reminders scheduled. */
  readonly executeSideEffects: boolean;
  readonly outputChannel: OutputChannelName;
}

/** `PUT /conversations/{id}/tracker/events`: the stored events become exactly these (checked) events. */
export interface ReplaceEventsCommand {
  readonly conversationId: string;
  readonly events: readonly Record<string, unknown>[];
  readonly verbosity: EventVerbosity;
}

/** `POST /conversations/{id}/messages`: a user message logged (parsed, slots extracted) without predicting or acting. */
export interface AddMessageCommand {
  readonly conversationId: string;
  readonly text: string;
  /** Parse data given with the message; null: the loaded NLU parses the text. */
  readonly parseData: JsonObject | null;
  readonly verbosity: EventVerbosity;
  /** The user event's `message_id`; absent or null: a new one. */
  readonly messageId?: string | null;
}

/** `GET /conversations/{id}/tracker`: the tracker of every stored session. */
export interface TrackerQuery {
  readonly conversationId: string;
  readonly verbosity: EventVerbosity;
  /** Only events up to this time (`until`); null: all. */
  readonly until: number | null;
}

/** `GET /conversations/{id}/story`: the conversation as Rasa's YAML test stories. */
export interface StoryQuery {
  readonly conversationId: string;
  readonly until: number | null;
  readonly allSessions: boolean;
}

/** `GET /conversations/{id}/test_case`: the conversation as an end-to-end test case. */
export interface TestCaseQuery {
  readonly conversationId: string;
  /** Only events up to this time (`until`); null: all. */
  readonly until: number | null;
}
