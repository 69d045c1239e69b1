import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';
import { isTruthy } from 'src/core/events/json-values';

/**
 * `loop_interrupted`: whether the active loop was interrupted (an unhappy path). Legacy
 * `form_validation {validate}` events are read as this kind with `isInterrupted = !validate`.
 */
export interface LoopInterrupted extends EventBase {
  readonly type: 'loop_interrupted';
  readonly isInterrupted: boolean;
}

export function loopInterrupted(
  init: EventBaseInit & { readonly isInterrupted: boolean },
): LoopInterrupted {
  return { type: 'loop_interrupted', ...eventBase(init), isInterrupted: init.isInterrupted };
}

export const LOOP_INTERRUPTED_KIND = defineEvent<LoopInterrupted>({
  type: 'loop_interrupted',
  decode: (raw, base) => loopInterrupted({ ...base, isInterrupted: isTruthy(raw.is_interrupted) }),
  encode: (e, d) => {
    d.is_interrupted = e.isInterrupted;
  },
  legacyNames: {
    form_validation: {
      decode: (raw, base) =>
        loopInterrupted({
          ...base,
          isInterrupted: !isTruthy(raw.validate === undefined ? true : raw.validate),
        }),
    },
  },
  apply: (e, state) => {
    if (state.loop !== null) state.loop = { ...state.loop, isInterrupted: e.isInterrupted };
  },
  example: { event: 'loop_interrupted', timestamp: 1700000000.5, is_interrupted: true },
});
