import {
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
  RULE_SNIPPET_ACTION_NAME,
} from 'src/core/domain/domain-constants';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { optionalNumber, optionalString } from 'src/core/events/json-values';

/** `action`: an action ran (or, end to end, a bot text was predicted). */
export interface ActionExecuted extends EventBase {
  readonly type: 'action';
  /** Action name; null only for end-to-end predictions (then `actionText` is set). */
  readonly name: string | null;
  readonly policy: string | null;
  readonly confidence: number | null;
  readonly actionText: string | null;
  readonly hideRuleTurn: boolean;
}

export interface ActionExecutedInit extends EventBaseInit {
  readonly name?: string | null;
  readonly policy?: string | null;
  readonly confidence?: number | null;
  readonly actionText?: string | null;
  readonly hideRuleTurn?: boolean;
}

/** Throws `EVENTS.INVALID` when neither a name nor an action text is given (as Rasa does). */
export function actionExecuted(init: ActionExecutedInit): ActionExecuted {
  const name = init.name ?? null;
  const actionText = init.actionText ?? null;
  if (name === null && actionText === null) {
    throw new DialogueError(
      'EVENTS.INVALID',
      'Both the name of the action and the end-to-end predicted text are missing. ' +
        'The `ActionExecuted` event cannot be initialised.',
    );
  }
  return {
    type: 'action',
    ...eventBase(init),
    name,
    policy: init.policy ?? null,
    confidence: init.confidence ?? null,
    actionText,
    hideRuleTurn: init.hideRuleTurn ?? false,
  };
}

/** Actions a story never shows. */
const HIDDEN_ACTIONS = new Set([
  ACTION_LISTEN_NAME,
  ACTION_SESSION_START_NAME,
  ACTION_UNLIKELY_INTENT_NAME,
]);

export const ACTION_EXECUTED_KIND = defineEvent<ActionExecuted>({
  type: 'action',
  decode: (raw, base) =>
    actionExecuted({
      ...base,
      name: optionalString(raw.name),
      policy: optionalString(raw.policy),
      confidence: optionalNumber(raw.confidence),
      actionText: optionalString(raw.action_text),
      hideRuleTurn: raw.hide_rule_turn === true,
    }),
  encode: (e, d) => {
    d.name = e.name;
    d.policy = e.policy;
    d.confidence = e.confidence;
    d.action_text = e.actionText;
    d.hide_rule_turn = e.hideRuleTurn;
  },
  schema: {
    properties: {
      policy: { type: ['string', 'null'] },
      confidence: { type: ['number', 'null'] },
      name: { type: ['string', 'null'] },
      hide_rule_turn: { type: 'boolean' },
      action_text: { type: ['string', 'null'] },
    },
  },
  apply: (e, state) => {
    state.setLatestAction(e.name ? { action_name: e.name } : { action_text: e.actionText ?? '' });
    state.followup = null;
  },
  story: (e) => {
    if (e.name === RULE_SNIPPET_ACTION_NAME) return null;
    if (e.name !== null && HIDDEN_ACTIONS.has(e.name)) return null;
    if (e.name) return { action: e.name };
    if (e.actionText) return { bot: e.actionText };
    return null;
  },
  storeColumn: 'action',
  example: {
    event: 'action',
    timestamp: 1700000000.5,
    name: 'utter_greet',
    policy: 'TEDPolicy',
    confidence: 0.7,
    action_text: null,
    hide_rule_turn: false,
  },
});
