import { DialogueError } from 'src/core/errors/dialogue-error';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

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
