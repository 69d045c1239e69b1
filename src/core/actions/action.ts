import { type Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/** What an action runs with. */
export interface ActionContext {
  /** The conversation as it is before the action (do not update it). */
  readonly tracker: DialogueStateTracker;
  readonly domain: Domain;
  /** Name of the output channel (picks channel-specific response variations). */
  readonly channel: string | null;
  readonly now: () => number;
  /** The custom action server (`endpoints.yml` `action_endpoint`), if configured. */
  readonly endpoint: ActionServer | null;
  /** The `nlg` endpoint of endpoints.yml; absent or null: the domain's responses. */
  readonly nlg?: ResponseGenerator | null;
  /** Resolves another action by name (forms run their `utter_ask_*` and validators). */
  readonly actionFor: (name: string) => Action;
  readonly random?: () => number;
  /** Reports a problem that does not stop the action (e.g. a failing slot-mapping action). */
  readonly warn?: (message: string, data?: JsonObject) => void;
  /**
   * The prediction's action metadata (FlowPolicy: `active_flow`, `step_id`): a response action
   * adds it to its `bot` events' metadata, as Rasa's `ActionBotResponse` does.
   */
  readonly actionMetadata?: JsonObject | null;
}

/** The answer of an action server: events and responses (rasa-sdk's shape). */
export interface ActionServerResponse {
  readonly events: JsonObject[];
  readonly responses: JsonObject[];
}

/** A custom action server (`ActionEndpoint` in remote-action.ts speaks its HTTP protocol). */
export interface ActionServer {
  call(name: string, ctx: ActionContext): Promise<ActionServerResponse>;
}

/** Where bot responses come from (Rasa's `NaturalLanguageGenerator`; `NlgServer` asks a server). */
export interface ResponseGenerator {
  /** A response dict (`{text?, buttons?, image?, ...}`), or null when there is none. */
  generate(
    name: string,
    tracker: DialogueStateTracker,
    channel: string | null,
    kwargs: JsonObject,
  ): Promise<JsonObject | null>;
}

/** An action the assistant can run (Rasa `Action`): returns the events it produces. */
export interface Action {
  readonly name: string;
  run(ctx: ActionContext): Promise<DialogueEvent[]>;
}

/**
 * Rasa's ActionExecutionRejection: the action refuses to run now (a form could not fill the
 * requested slot, a custom action answered HTTP 400); the processor logs
 * `action_execution_rejected` and predicts again.
 */
export class ActionExecutionRejection extends Error {
  constructor(
    readonly actionName: string,
    message?: string,
  ) {
    super(message ?? `Custom action '${actionName}' rejected execution.`);
    this.name = 'ActionExecutionRejection';
  }
}

/** A custom action failed (server unreachable, timeout, bad answer): the turn goes on without its events. */
export class ActionServerError extends Error {
  constructor(
    readonly actionName: string,
    message: string,
  ) {
    super(message);
    this.name = 'ActionServerError';
  }
}
