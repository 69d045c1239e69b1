import { ActionExecutionRejection, type Action, type ActionContext } from 'src/core/actions/action';
import { actionFor } from 'src/core/actions/action-registry';
import { type ResponseGenerator } from 'src/core/actions/nlg-server';
import { type ActionEndpoint } from 'src/core/actions/remote-action';
import { runActionExtractSlots } from 'src/core/actions/slot-extraction';
import { type Domain } from 'src/core/domain/domain';
import {
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  USER_INTENT_RESTART,
} from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type DialogueStackUpdated } from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { storedParseData } from 'src/core/events/json-values';
import { externalUserUttered, userUttered, type UserUttered } from 'src/core/events/user-uttered';
import {
  commandEvents,
  messageHasCommands,
  withCommands,
  type CalmSetup,
} from 'src/core/flows/calm-turn';
import { joinedStackEvent } from 'src/core/flows/stack-events';
import { type EnsemblePrediction, type PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { type Tracer } from 'src/core/ports/tracer';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/** Rasa's `MAX_NUMBER_OF_PREDICTIONS` default. */
export const DEFAULT_MAX_NUMBER_OF_PREDICTIONS = 10;

export interface ProcessorOptions {
  /** Custom action server, or null. */
  readonly endpoint: ActionEndpoint | null;
  /** The `nlg` endpoint (an NLG server); absent or null: the domain's responses. */
  readonly nlg?: ResponseGenerator | null;
  readonly maxPredictions?: number;
  /** Strictly increasing event times (seconds). */
  readonly now: () => number;
  /** Warnings and action failures (logged by the caller). */
  readonly warn?: (message: string, data?: JsonObject) => void;
  readonly random?: () => number;
  /** The flows and command generators of a CALM assistant (Rasa Pro); absent: none. */
  readonly calm?: CalmSetup | null;
  /** Spans of the prediction and of each action; absent: none. */
  readonly tracer?: Tracer;
}

/** A user message ready to be logged (already parsed). */
export interface ParsedUserMessage {
  readonly text: string | null;
  readonly parseData: JsonObject;
  readonly inputChannel: string | null;
  readonly messageId: string | null;
  readonly metadata?: JsonObject | null;
}

/** How the next action was chosen. */
export interface ActionPrediction {
  readonly actionName: string;
  readonly policyName: string | null;
  readonly confidence: number | null;
  readonly events: DialogueEvent[];
  readonly hideRuleTurn: boolean;
  /** The prediction's action metadata (FlowPolicy: `active_flow`, `step_id`), if any. */
  readonly actionMetadata?: JsonObject | null;
  /**
   * A `stack` event of the command processor that the first of `events` includes (see
   * `nextActionAfterHeld`): logged alone when the action is rejected and `events` are not.
   */
  readonly heldStack?: DialogueStackUpdated;
}

/** `action_listen` after an action took the user's message back (no policy chose it). */
const LISTEN_AFTER_REVERT: Omit<ActionPrediction, 'events'> = {
  actionName: ACTION_LISTEN_NAME,
  policyName: null,
  confidence: 1,
  hideRuleTurn: false,
};

/**
 * Rasa's MessageProcessor without persistence: logs a user message, extracts slots, runs the
 * prediction loop (followup actions first, ensemble otherwise, circuit breaker after
 * `maxPredictions` actions), runs actions and applies their events to the tracker. The caller
 * owns locking, session handling, persistence and sending bot messages.
 */
export class DialogueProcessor {
  constructor(
    readonly domain: Domain,
    readonly ensemble: PolicyEnsemble | null,
    private readonly options: ProcessorOptions,
  ) {}

  /** Whether there is a dialogue model (false: NLU-only, messages are only logged). */
  get hasCore(): boolean {
    return this.ensemble !== null;
  }

  /** The `user` event of a parsed message (Rasa `UserUttered` as the processor builds it). */
  userEvent(message: ParsedUserMessage): UserUttered {
    const intent = isObject(message.parseData.intent) ? message.parseData.intent : {};
    const entities = Array.isArray(message.parseData.entities)
      ? (message.parseData.entities as JsonObject[])
      : [];
    const parseData = storedParseData(message.parseData);
    parseData.text = message.text;
    parseData.message_id = message.messageId;
    parseData.metadata = message.metadata ?? {};
    return userUttered({
      text: message.text,
      intent,
      entities,
      parseData,
      inputChannel: message.inputChannel,
      messageId: message.messageId,
      metadata: message.metadata ?? {},
      timestamp: this.options.now(),
    });
  }

  /** Logs the message, extracts slots and (with a dialogue model) predicts and acts. */
  async handleUserMessage(
    tracker: DialogueStateTracker,
    message: ParsedUserMessage,
    channel: string | null,
  ): Promise<void> {
    const calm = this.options.calm ?? null;
    const parseData =
      calm === null
        ? message.parseData
        : await withCommands(calm, message.parseData, tracker, this.domain);
    tracker.update(
      this.userEvent(parseData === message.parseData ? message : { ...message, parseData }),
    );
    if (!this.hasCore) return;
    await this.afterUserEvent(tracker, channel);
  }

  /**
   * The rest of a turn once the user event is logged: with commands (a CALM assistant), the
   * command processor's events — and no classic slot extraction, as Rasa Pro skips it for a
   * message that carries commands; then the prediction loop.
   */
  private async afterUserEvent(
    tracker: DialogueStateTracker,
    channel: string | null,
  ): Promise<void> {
    const calm = this.options.calm ?? null;
    if (calm !== null && messageHasCommands(tracker)) {
      const events = commandEvents(calm, tracker, this.domain, this.options.now);
      // A closing `stack` event is held back: the first prediction's own `stack` event (the
      // flow moving onto its first step) joins it, so the turn stores one where Rasa writes two.
      const held = events.at(-1)?.type === 'stack' ? (events.pop() as DialogueStackUpdated) : null;
      for (const e of events) tracker.update(e);
      await this.runPredictionLoop(tracker, channel, held);
      return;
    }
    await this.runExtractSlots(tracker, channel);
    await this.runPredictionLoop(tracker, channel);
  }

  /**
   * Rasa's `trigger_external_user_uttered`: an intent stands in for a user message.
   * `metadata` is added to the user event's (a fired reminder marks it so).
   */
  async triggerIntent(
    tracker: DialogueStateTracker,
    intent: string,
    entities: readonly JsonObject[],
    channel: string | null,
    metadata?: JsonObject,
  ): Promise<void> {
    let event = externalUserUttered({
      intentName: intent,
      entities,
      inputChannel: tracker.latestInputChannel,
      timestamp: this.options.now(),
      ...(metadata === undefined ? {} : { metadata }),
    });
    const calm = this.options.calm ?? null;
    if (calm !== null) {
      const parseData = await withCommands(calm, event.parseData, tracker, this.domain);
      event = { ...event, parseData };
    }
    tracker.update(event);
    if (!this.hasCore) return;
    await this.afterUserEvent(tracker, channel);
  }

  /**
   * Rasa's `action_extract_slots` after a user message: slot mappings (custom ones on the action
   * server, then `action_validate_slot_mappings`); its events (slots, bot messages) are logged.
   */
  async runExtractSlots(
    tracker: DialogueStateTracker,
    channel: string | null = null,
  ): Promise<void> {
    const events = await runActionExtractSlots(this.context(tracker, channel));
    for (const e of events) tracker.update(e);
  }

  /** The ensemble's prediction for the tracker (null without a dialogue model). */
  predict(tracker: DialogueStateTracker): EnsemblePrediction | null {
    const ensemble = this.ensemble;
    if (ensemble === null) return null;
    const tracer = this.options.tracer;
    if (tracer === undefined) return ensemble.predict(tracker, this.domain, this.options.now);
    return tracer.inSpan('parley.policy.predict', {}, (span) => {
      const p = ensemble.predict(tracker, this.domain, this.options.now);
      if (p !== null) {
        span.setAttribute('parley.action', p.actionName);
        if (p.policyName !== null) span.setAttribute('parley.policy', p.policyName);
      }
      return p;
    });
  }

  /** Predicts and runs actions until `action_listen` (or the circuit breaker trips). */
  async runPredictionLoop(
    tracker: DialogueStateTracker,
    channel: string | null,
    held: DialogueStackUpdated | null = null,
  ): Promise<void> {
    const max = this.options.maxPredictions ?? DEFAULT_MAX_NUMBER_OF_PREDICTIONS;
    let again = true;
    while (again && this.shouldHandle(tracker)) {
      if (actionsSinceListen(tracker) >= max) {
        this.options.warn?.(
          `Circuit breaker tripped. Stopped predicting more actions for sender '${tracker.senderId}'.`,
          { sender_id: tracker.senderId, max_number_of_predictions: max },
        );
        break;
      }
      let next: ActionPrediction | null;
      if (held === null) next = this.nextAction(tracker);
      else {
        next = this.nextActionAfterHeld(tracker, held);
        held = null;
      }
      if (next === null) break;
      again = await this.runAction(tracker, next, channel);
      if (again && tracker.events.at(-1)?.type === 'rewind') {
        // An action that ends by taking the user's message back (`action_default_fallback`, the
        // end of the two-stage fallback, a custom fallback returning UserUtteranceReverted)
        // leaves the conversation waiting for the user. In Rasa the revert also brings back the
        // loop the fallback had ended, whose RulePolicy branch then predicts `action_listen`;
        // here the listen is run at once, rather than predicting again on a taken-back turn.
        const prediction = this.nextAction(tracker);
        await this.runAction(
          tracker,
          prediction?.actionName === ACTION_LISTEN_NAME
            ? prediction
            : { ...LISTEN_AFTER_REVERT, events: [] },
          channel,
        );
        break;
      }
    }
    if (held !== null) tracker.update(held);
  }

  /**
   * The first prediction of a CALM turn whose command events end with `held` (a `stack` event not
   * yet logged): predicted on a copy of the tracker with `held` applied. When the prediction
   * starts with a `stack` event of its own, that event becomes one with `held` (logged with the
   * action, or `held` alone when the action is rejected); otherwise `held` is logged at once.
   * Either way the tracker ends as if both had been logged.
   */
  private nextActionAfterHeld(
    tracker: DialogueStateTracker,
    held: DialogueStackUpdated,
  ): ActionPrediction | null {
    const view = tracker.copy();
    view.update(held);
    const next = this.nextAction(view);
    const first = next?.events[0];
    if (next === null || first?.type !== 'stack') {
      tracker.update(held);
      return next;
    }
    return {
      ...next,
      events: [joinedStackEvent(held, first, tracker.stack), ...next.events.slice(1)],
      heldStack: held,
    };
  }

  /** Followup action when set (and known), else the ensemble's choice. */
  nextAction(tracker: DialogueStateTracker): ActionPrediction | null {
    const followup = tracker.followupAction;
    // A tracker starts (and resets) with `action_listen` as its followup: that one is not a request.
    if (followup && followup !== ACTION_LISTEN_NAME) {
      if (this.domain.actionNamesOrTexts.includes(followup)) {
        return {
          actionName: followup,
          policyName: 'followup_action',
          confidence: 1,
          events: [],
          hideRuleTurn: false,
        };
      }
    }
    const p = this.predict(tracker);
    if (p === null) return null;
    return {
      actionName: p.actionName,
      policyName: p.policyName,
      confidence: p.maxConfidence,
      events: p.events,
      hideRuleTurn: p.hideRuleTurn,
      actionMetadata: p.actionMetadata ?? null,
    };
  }

  /**
   * Runs one action on a copy of the tracker with the prediction's events, then logs prediction
   * events, `action` and the action's events. A rejection logs `action_execution_rejected`;
   * other failures are reported and the action counts as executed without events. Returns
   * whether another action should be predicted.
   */
  async runAction(
    tracker: DialogueStateTracker,
    prediction: ActionPrediction,
    channel: string | null,
  ): Promise<boolean> {
    const name = prediction.actionName;
    const action: Action = actionFor(name, this.domain);
    let events: DialogueEvent[];
    try {
      // Actions only read the tracker: a copy is needed only to show them the prediction's events.
      let temporary = tracker;
      if (prediction.events.length > 0) {
        temporary = tracker.copy();
        for (const e of prediction.events) temporary.update(e);
      }
      const context = this.context(temporary, channel, prediction.actionMetadata);
      const tracer = this.options.tracer;
      events = await (tracer === undefined
        ? action.run(context)
        : tracer.inSpan('parley.action.run', { 'parley.action': name }, () => action.run(context)));
    } catch (error) {
      if (error instanceof ActionExecutionRejection) {
        this.options.warn?.(error.message, { action: name });
        if (prediction.heldStack !== undefined) tracker.update(prediction.heldStack);
        tracker.update(
          actionExecutionRejected({
            name,
            policy: prediction.policyName,
            confidence: prediction.confidence,
            timestamp: this.options.now(),
          }),
        );
        return shouldPredictAnother(name);
      }
      this.options.warn?.(
        `Encountered an exception while running action '${name}'. Bot will continue, but the actions events are lost. ${(error as Error).message}`,
        { action: name },
      );
      events = [];
    }
    const rejectedManually = events.some((e) => e.type === 'action_execution_rejected');
    if (rejectedManually) {
      if (prediction.heldStack !== undefined) tracker.update(prediction.heldStack);
    } else {
      for (const e of prediction.events) tracker.update(e);
      tracker.update(
        actionExecuted({
          name,
          policy: prediction.policyName,
          confidence: prediction.confidence,
          hideRuleTurn: prediction.hideRuleTurn,
          timestamp: this.options.now(),
          metadata: prediction.actionMetadata ?? null,
        }),
      );
    }
    for (const e of events) tracker.update(e);
    if (events.some((e) => e.type === 'user')) await this.runExtractSlots(tracker, channel);
    return shouldPredictAnother(name);
  }

  /**
   * Runs a named action (`POST /conversations/{id}/execute`): unknown names throw
   * `DIALOGUE.UNKNOWN_ACTION`.
   */
  async executeAction(
    tracker: DialogueStateTracker,
    name: string,
    policy: string | null,
    confidence: number | null,
    channel: string | null,
  ): Promise<void> {
    actionFor(name, this.domain);
    await this.runAction(
      tracker,
      {
        actionName: name,
        policyName: policy,
        confidence: confidence ?? 0,
        events: [],
        hideRuleTurn: false,
      },
      channel,
    );
  }

  context(
    tracker: DialogueStateTracker,
    channel: string | null,
    actionMetadata?: JsonObject | null,
  ): ActionContext {
    // Built as one literal (absent options as undefined, like absent keys to every reader):
    // spreads in a literal define the keys after them on V8's slow path, for every action.
    return {
      tracker,
      domain: this.domain,
      channel,
      now: this.options.now,
      endpoint: this.options.endpoint,
      nlg: this.options.nlg ?? null,
      actionFor: (n) => actionFor(n, this.domain),
      warn: this.options.warn,
      random: this.options.random,
      actionMetadata: actionMetadata ?? undefined,
    };
  }

  private shouldHandle(tracker: DialogueStateTracker): boolean {
    return !tracker.paused || tracker.latestMessage.intent.name === USER_INTENT_RESTART;
  }
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function shouldPredictAnother(name: string): boolean {
  return name !== ACTION_LISTEN_NAME && name !== ACTION_SESSION_START_NAME;
}

/** Executed actions since the latest `action_listen` / `action_session_start`. */
export function actionsSinceListen(tracker: DialogueStateTracker): number {
  let n = 0;
  const events = tracker.events;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type !== 'action') continue;
    if (e.name === ACTION_LISTEN_NAME || e.name === ACTION_SESSION_START_NAME) break;
    n++;
  }
  return n;
}
