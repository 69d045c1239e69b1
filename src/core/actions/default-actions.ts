import { type Action, type ActionContext } from 'src/core/actions/action';
import { botUtteranceFrom } from 'src/core/actions/nlg';
import { renderResponse } from 'src/core/actions/nlg-server';
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
import { extendable, isJsonObject } from 'src/core/events/json-values';
import { restarted } from 'src/core/events/restarted';
import { sessionStarted } from 'src/core/events/session-started';
import { slotSet } from 'src/core/events/slot-set';
import { userUtteranceReverted } from 'src/core/events/user-utterance-reverted';
import { slotsToCarryOver } from 'src/core/session/session-start';

/** Utters a response (Rasa `ActionBotResponse`); a missing response utters nothing. */
export class ResponseAction implements Action {
  constructor(
    readonly name: string,
    private readonly silentFail = false,
  ) {}

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return utter(ctx, this.name, this.silentFail, {}, ctx.actionMetadata ?? null);
  }
}

/**
 * Rasa's `ActionBotResponse.run`: the response from the NLG (the `nlg` endpoint, else the
 * domain's responses) as a `bot` event; none when there is no such response.
 */
async function utter(
  ctx: ActionContext,
  response: string,
  silent = true,
  kwargs: JsonObject = {},
  actionMetadata: JsonObject | null = null,
): Promise<DialogueEvent[]> {
  const message = await renderResponse(ctx, response, kwargs);
  if (message === null) {
    if (!silent) ctx.warn?.(`Couldn't create message for response '${response}'.`, { response });
    return [];
  }
  // The prediction's action metadata joins the message (Rasa's `message.update(metadata)`).
  return [
    botUtteranceFrom(
      actionMetadata ? Object.assign(extendable(message), actionMetadata) : message,
      ctx.now(),
      response,
    ),
  ];
}

/** A bot text of an end-to-end story (Rasa's `ActionEndToEndResponse`). */
export class EndToEndResponseAction implements Action {
  constructor(readonly name: string) {}

  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    return Promise.resolve([botUtteranceFrom({ text: this.name }, ctx.now())]);
  }
}

/**
 * A retrieval action `utter_<intent>` (Rasa `ActionRetrieveResponse`): answers with the response
 * the ResponseSelector chose for the latest message, else with a domain response of the full
 * retrieval intent (`utter_faq/ask_name`).
 */
export class RetrievalAction implements Action {
  constructor(readonly name: string) {}

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
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
      const events = await utter(ctx, `utter_${key}`);
      if (events.length > 0) {
        return events.map((e) =>
          e.type === 'bot' ? { ...e, metadata: { ...e.metadata, utter_action: this.name } } : e,
        );
      }
    }
    const variations: unknown[] =
      response && Array.isArray(response.responses) ? (response.responses as unknown[]) : [];
    const picked = variations[Math.floor((ctx.random ?? Math.random)() * variations.length)];
    if (!isJsonObject(picked)) return [];
    return [botUtteranceFrom(picked, ctx.now(), this.name)];
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
    return utter(ctx, 'utter_restart').then((u) => [...u, restarted({ timestamp: ctx.now() })]);
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
    return utter(ctx, 'utter_default').then((u) => [
      ...u,
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
    return utter(ctx, 'utter_back').then((u) => [
      ...u,
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
function intentToAffirm(ctx: ActionContext): string {
  const parse = ctx.tracker.latestMessage.parseData;
  const name = ctx.tracker.latestMessage.intent.name;
  const ranking = Array.isArray(parse.intent_ranking) ? (parse.intent_ranking as unknown[]) : [];
  if (name === DEFAULT_NLU_FALLBACK_INTENT_NAME && ranking.length > 1) {
    const second = ranking[1];
    if (isJsonObject(second)) return pythonStr(second.name);
  }
  return pythonStr(name);
}

/** How Python's f-string shows a value (`None` for a missing one). */
function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * `action_default_ask_affirmation`: "Did you mean '<intent>'?" with the buttons `Yes` →
 * `/<intent>` and `No` → `/out_of_scope` (Rasa's default; override it with a custom action of
 * the same name for other prompts).
 */
class AskAffirmationAction implements Action {
  readonly name = ACTION_DEFAULT_ASK_AFFIRMATION_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const intent = intentToAffirm(ctx);
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
    return utter(ctx, 'utter_ask_rephrase');
  }
}

/** Name of the latest executed action other than `action_listen`, `skip` of them back. */
function lastExecutedActionIs(ctx: ActionContext, name: string, skip = 0): boolean {
  const events = ctx.tracker.appliedEvents();
  let seen = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type !== 'action' || e.name === ACTION_LISTEN_NAME) continue;
    if (seen === skip) return e.name === name;
    seen++;
  }
  return false;
}

/** The latest user message again, its intent confidence set to 1.0 (the user confirmed it). */
function clarifiedMessage(ctx: ActionContext): DialogueEvent {
  const message = ctx.tracker.latestMessage;
  const parsedIntent = isJsonObject(message.parseData.intent) ? message.parseData.intent : {};
  return {
    ...message,
    intent: { ...message.intent, confidence: 1.0 },
    parseData: { ...message.parseData, intent: { ...parsedIntent, confidence: 1.0 } },
    timestamp: ctx.now(),
  };
}

function reverts(ctx: ActionContext, n: number): DialogueEvent[] {
  return Array.from({ length: n }, () => userUtteranceReverted({ timestamp: ctx.now() }));
}

/**
 * `action_revert_fallback_events` (Rasa's, from the TwoStageFallbackPolicy days): after a
 * rephrase (the last action was `action_default_ask_rephrase`) it removes the rephrase turns and
 * replays the rephrased message; after an affirmation it removes the affirmation turns (and a
 * rephrase before them) and replays the message with confidence 1.0; otherwise nothing.
 */
class RevertFallbackEventsAction implements Action {
  readonly name = ACTION_REVERT_FALLBACK_EVENTS_NAME;
  run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const listen = () => actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: ctx.now() });
    if (lastExecutedActionIs(ctx, ACTION_DEFAULT_ASK_REPHRASE_NAME)) {
      return Promise.resolve([
        ...reverts(ctx, 3),
        listen(),
        { ...ctx.tracker.latestMessage, timestamp: ctx.now() },
      ]);
    }
    if (lastExecutedActionIs(ctx, ACTION_DEFAULT_ASK_AFFIRMATION_NAME)) {
      const events: DialogueEvent[] = [...reverts(ctx, 2), listen()];
      if (lastExecutedActionIs(ctx, ACTION_DEFAULT_ASK_REPHRASE_NAME, 1)) {
        events.push(...reverts(ctx, 3), listen());
      }
      events.push(clarifiedMessage(ctx));
      return Promise.resolve(events);
    }
    return Promise.resolve([]);
  }
}

/**
 * Intent names of the last `n` user messages or reverts after the latest restart (newest
 * first); a revert takes a place but adds no name (Rasa's `_last_n_intent_names`).
 */
function lastIntentNames(ctx: ActionContext, n: number): (string | null)[] {
  const names: (string | null)[] = [];
  const events = ctx.tracker.eventsAfterLatestRestart();
  let seen = 0;
  for (let i = events.length - 1; i >= 0 && seen < n; i--) {
    const e = events[i] as DialogueEvent;
    if (e.type === 'user') {
      names.push(typeof e.intent.name === 'string' ? e.intent.name : null);
      seen++;
    } else if (e.type === 'rewind') {
      seen++;
    }
  }
  return names;
}

function sameList(a: readonly (string | null)[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * `action_two_stage_fallback`, a loop as Rasa's `TwoStageFallbackAction`:
 * - activation (low NLU confidence, `nlu_fallback`): `active_loop` and
 *   `action_default_ask_affirmation` ("Did you mean '<intent>'?", Yes/No buttons);
 * - the user denies (`out_of_scope`): `action_default_ask_rephrase` (`utter_ask_rephrase`);
 * - the rephrase is again `nlu_fallback`: ask to affirm once more;
 * - the user clarifies (any other intent, e.g. the affirmed one): the loop ends, the fallback
 *   turns are reverted (`rewind`), and the message is replayed after `action_listen` with
 *   confidence 1.0, so the dialogue continues as if it had been understood at once;
 * - two `nlu_fallback` messages in a row, or a second denial: the loop ends with
 *   `action_default_fallback` (`utter_default`, `rewind`).
 */
class TwoStageFallbackAction implements Action {
  readonly name = ACTION_TWO_STAGE_FALLBACK_NAME;

  async run(ctx: ActionContext): Promise<DialogueEvent[]> {
    const events: DialogueEvent[] = [];
    if (ctx.tracker.activeLoopName !== this.name) {
      events.push(activeLoop({ name: this.name, timestamp: ctx.now() }));
    }
    const lastIntent = ctx.tracker.latestMessage.intent.name;
    const twoFallbacksInARow = sameList(lastIntentNames(ctx, 2), [
      DEFAULT_NLU_FALLBACK_INTENT_NAME,
      DEFAULT_NLU_FALLBACK_INTENT_NAME,
    ]);
    const secondAffirmationFailed = sameList(lastIntentNames(ctx, 3), [
      USER_INTENT_OUT_OF_SCOPE,
      DEFAULT_NLU_FALLBACK_INTENT_NAME,
      USER_INTENT_OUT_OF_SCOPE,
    ]);
    const clarified =
      lastIntent !== DEFAULT_NLU_FALLBACK_INTENT_NAME && lastIntent !== USER_INTENT_OUT_OF_SCOPE;
    const done = clarified || twoFallbacksInARow || secondAffirmationFailed;
    if (!done) {
      const justActivated = events.length > 0;
      const ask =
        justActivated || lastIntent === DEFAULT_NLU_FALLBACK_INTENT_NAME
          ? ACTION_DEFAULT_ASK_AFFIRMATION_NAME
          : ACTION_DEFAULT_ASK_REPHRASE_NAME;
      events.push(...(await ctx.actionFor(ask).run(ctx)));
      return events;
    }
    events.push(activeLoop({ name: null, timestamp: ctx.now() }));
    if (twoFallbacksInARow || secondAffirmationFailed) {
      events.push(...(await ctx.actionFor(ACTION_DEFAULT_FALLBACK_NAME).run(ctx)));
      return events;
    }
    events.push(
      userUtteranceReverted({ timestamp: ctx.now() }),
      actionExecuted({ name: ACTION_LISTEN_NAME, timestamp: ctx.now() }),
      clarifiedMessage(ctx),
    );
    return events;
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
