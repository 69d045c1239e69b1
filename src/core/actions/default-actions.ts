import { type Action, type ActionContext } from 'src/core/actions/action';
import { botUtteranceFrom, generateResponse } from 'src/core/actions/nlg';
import { runActionExtractSlots } from 'src/core/actions/slot-extraction';
import {
  ACTION_BACK_NAME,
  ACTION_DEACTIVATE_LOOP_NAME,
  ACTION_DEFAULT_ASK_AFFIRMATION_NAME,
  ACTION_DEFAULT_ASK_REPHRASE_NAME,
  ACTION_DEFAULT_FALLBACK_NAME,
  ACTION_EXTRACT_SLOTS,
  ACTION_HANGUP_NAME,
  ACTION_LISTEN_NAME,
  ACTION_RESTART_NAME,
  ACTION_REVERT_FALLBACK_EVENTS_NAME,
  ACTION_SEND_TEXT_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_TWO_STAGE_FALLBACK_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
  DEFAULT_NLU_FALLBACK_INTENT_NAME,
  REQUESTED_SLOT,
  USER_INTENT_OUT_OF_SCOPE,
} from 'src/core/domain/domain-constants';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { botUttered } from 'src/core/events/bot-uttered';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { isJsonObject } from 'src/core/events/json-values';
import { restarted } from 'src/core/events/restarted';
import { sessionStarted } from 'src/core/events/session-started';
import { slotSet } from 'src/core/events/slot-set';
import { userUtteranceReverted } from 'src/core/events/user-utterance-reverted';
import { userUttered } from 'src/core/events/user-uttered';
import { slotsToCarryOver } from 'src/core/session/session-start';

/** Utters a response (Rasa `ActionBotResponse`); a missing response utters nothing. */
export class ResponseAction implements Action {
  constructor(
    readonly name: string,
    private readonly silentFail = false,
  ) {}

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve(utter(ctx, this.name, this.silentFail));
  }
}

function utter(
  ctx: ActionContext,
  response: string,
  _silent = true,
  kwargs: JsonObject = {},
): DialogueEvent[] {
  const message = generateResponse(
    ctx.domain,
    response,
    ctx.tracker.slotValuesObject(),
    ctx.channel,
    kwargs,
    ctx.random,
  );
  if (message === null) return [];
  return [botUtteranceFrom({ ...message, utter_action: response }, ctx.now())];
}

/**
 * A retrieval action `utter_<intent>` (Rasa `ActionRetrieveResponse`): answers with the response
 * the ResponseSelector chose for the latest message, else with a domain response of the full
 * retrieval intent (`utter_faq/ask_name`).
 */
export class RetrievalAction implements Action {
  constructor(readonly name: string) {}

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const intent = this.name.slice('utter_'.length);
    const parse = ctx.tracker.latestMessage.parseData;
    const selector = isJsonObject(parse.response_selector) ? parse.response_selector : {};
    const entry = isJsonObject(selector[intent])
      ? selector[intent]
      : isJsonObject(selector.default)
        ? selector.default
        : null;
    const response = entry && isJsonObject(entry.response) ? entry.response : null;
    const key =
      response && typeof response.intent_response_key === 'string'
        ? response.intent_response_key
        : (ctx.tracker.latestMessage.intent.full_retrieval_intent_name as string | undefined);
    if (key) {
      const events = utter(ctx, `utter_${key}`);
      if (events.length > 0) {
        return Promise.resolve(
          events.map((e) =>
            e.type === 'bot' ? { ...e, metadata: { ...e.metadata, utter_action: this.name } } : e,
          ),
        );
      }
    }
    const variations: unknown[] =
      response && Array.isArray(response.responses) ? (response.responses as unknown[]) : [];
    const picked = variations[Math.floor((ctx.random ?? Math.random)() * variations.length)];
    if (!isJsonObject(picked)) return Promise.resolve([]);
    return Promise.resolve([botUtteranceFrom({ ...picked, utter_action: this.name }, ctx.now())]);
  }
}

class ListenAction implements Action {
  readonly name = ACTION_LISTEN_NAME;
  run(): Promise<DialogueEvent[]> {
    return Promise.resolve([]);
  }
}

class RestartAction implements Action {
  readonly name = ACTION_RESTART_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([...utter(ctx, 'utter_restart'), restarted({ timestamp: ctx.now() })]);
  }
}

/** `action_session_start`: a new session, slots carried over when configured. */
class SessionStartAction implements Action {
  readonly name = ACTION_SESSION_START_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const events: DialogueEvent[] = [sessionStarted({ timestamp: ctx.now() })];
    if (ctx.domain.sessionConfig.carryOverSlots) {
      for (const s of slotsToCarryOver(ctx.tracker)) {
        events.push(
          slotSet({
            name: s.name,
            value: s.value,
            timestamp: ctx.now(),
            metadata: { ...s.metadata },
          }),
        );
      }
    }
    events.push(actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: ctx.now() }));
    return Promise.resolve(events);
  }
}

class DefaultFallbackAction implements Action {
  readonly name = ACTION_DEFAULT_FALLBACK_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([
      ...utter(ctx, 'utter_default'),
      userUtteranceReverted({ timestamp: ctx.now() }),
    ]);
  }
}

class DeactivateLoopAction implements Action {
  readonly name = ACTION_DEACTIVATE_LOOP_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([
      activeLoop({ name: null, timestamp: ctx.now() }),
      slotSet({ name: REQUESTED_SLOT, value: null, timestamp: ctx.now() }),
    ]);
  }
}

class BackAction implements Action {
  readonly name = ACTION_BACK_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([
      ...utter(ctx, 'utter_back'),
      userUtteranceReverted({ timestamp: ctx.now() }),
      userUtteranceReverted({ timestamp: ctx.now() }),
    ]);
  }
}

/**
 * `action_hangup`: ends a voice call. It sends the bot message `{custom: {hangup: true}}`: a
 * voice channel hangs up once the caller has heard everything said before it; a collecting
 * channel (REST) returns that message to the client, as Rasa Pro does.
 */
export class HangupAction implements Action {
  readonly name = ACTION_HANGUP_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([
      botUttered({ text: null, data: { custom: { hangup: true } }, timestamp: ctx.now() }),
    ]);
  }
}

class NoOpAction implements Action {
  constructor(readonly name: string) {}
  run(): Promise<DialogueEvent[]> {
    return Promise.resolve([]);
  }
}

class ExtractSlotsAction implements Action {
  readonly name = ACTION_EXTRACT_SLOTS;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return runActionExtractSlots(ctx);
  }
}

/** The intent the user message is about (for nlu_fallback: the runner-up of the ranking). */
function intentToAffirm(ctx: ActionContext): string | null {
  const parse = ctx.tracker.latestMessage.parseData;
  const name = ctx.tracker.latestMessage.intent.name;
  if (name === DEFAULT_NLU_FALLBACK_INTENT_NAME && Array.isArray(parse.intent_ranking)) {
    const second: unknown = (parse.intent_ranking as unknown[])[1];
    if (isJsonObject(second) && typeof second.name === 'string') return second.name;
  }
  return typeof name === 'string' ? name : null;
}

class AskAffirmationAction implements Action {
  readonly name = ACTION_DEFAULT_ASK_AFFIRMATION_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const intent = intentToAffirm(ctx) ?? USER_INTENT_OUT_OF_SCOPE;
    const custom = utter(ctx, 'utter_ask_affirmation');
    if (custom.length > 0) return Promise.resolve(custom);
    return Promise.resolve([
      botUtteranceFrom(
        {
          text: `Did you mean '${intent}'?`,
          buttons: [
            { title: 'Yes', payload: `/${intent}` },
            { title: 'No', payload: `/${USER_INTENT_OUT_OF_SCOPE}` },
          ],
          utter_action: this.name,
        },
        ctx.now(),
      ),
    ]);
  }
}

class AskRephraseAction implements Action {
  readonly name = ACTION_DEFAULT_ASK_REPHRASE_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve(utter(ctx, 'utter_ask_rephrase'));
  }
}

/** `action_revert_fallback_events`: forgets the fallback turns after a successful rephrase or affirmation. */
class RevertFallbackEventsAction implements Action {
  readonly name = ACTION_REVERT_FALLBACK_EVENTS_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve(revertFallback(ctx));
  }
}

function revertFallback(ctx: ActionContext): DialogueEvent[] {
  const users = ctx.tracker.appliedEvents().filter((e) => e.type === 'user');
  const reverts = Math.max(0, users.length >= 2 ? 2 : users.length);
  const events: DialogueEvent[] = [];
  for (let i = 0; i < reverts; i++) events.push(userUtteranceReverted({ timestamp: ctx.now() }));
  return events;
}

/**
 * `action_two_stage_fallback` as a loop: ask to affirm the intent; affirmed → the message is
 * re-applied with that intent (confidence 1.0); denied → ask to rephrase; still unclear after
 * the rephrase → `action_default_fallback`.
 */
class TwoStageFallbackAction implements Action {
  readonly name = ACTION_TWO_STAGE_FALLBACK_NAME;

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const tracker = ctx.tracker;
    const intent = tracker.latestMessage.intent.name;
    const active = tracker.activeLoopName === this.name;
    if (!active) {
      return [
        activeLoop({ name: this.name, timestamp: ctx.now() }),
        ...(await new AskAffirmationAction().run(ctx)),
      ];
    }
    const asked = tracker
      .appliedEvents()
      .filter(
        (e) => e.type === 'bot' && e.metadata.utter_action === ACTION_DEFAULT_ASK_AFFIRMATION_NAME,
      ).length;
    if (intent === USER_INTENT_OUT_OF_SCOPE || intent === DEFAULT_NLU_FALLBACK_INTENT_NAME) {
      if (intent === USER_INTENT_OUT_OF_SCOPE && asked === 1) {
        return utter(ctx, 'utter_ask_rephrase');
      }
      if (asked < 2 && intent === DEFAULT_NLU_FALLBACK_INTENT_NAME) {
        return new AskAffirmationAction().run(ctx);
      }
      return [
        ...(await new DefaultFallbackAction().run(ctx)),
        activeLoop({ name: null, timestamp: ctx.now() }),
      ];
    }
    const message = tracker.latestMessage;
    const affirmed = userUttered({
      text: message.text,
      intent: { ...message.intent, confidence: 1.0 },
      entities: message.entities,
      parseData: { ...message.parseData, intent: { ...message.intent, confidence: 1.0 } },
      inputChannel: message.inputChannel,
      timestamp: ctx.now(),
    });
    return [
      activeLoop({ name: null, timestamp: ctx.now() }),
      ...revertFallback(ctx),
      actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: ctx.now() }),
      affirmed,
    ];
  }
}

/** Rasa's default actions by name. */
export function defaultActions(): Map<string, Action> {
  const list: Action[] = [
    new ListenAction(),
    new RestartAction(),
    new SessionStartAction(),
    new DefaultFallbackAction(),
    new DeactivateLoopAction(),
    new RevertFallbackEventsAction(),
    new AskAffirmationAction(),
    new AskRephraseAction(),
    new TwoStageFallbackAction(),
    new NoOpAction(ACTION_UNLIKELY_INTENT_NAME),
    new BackAction(),
    new NoOpAction(ACTION_SEND_TEXT_NAME),
    new ExtractSlotsAction(),
  ];
  return new Map(list.map((a) => [a.name, a]));
}
