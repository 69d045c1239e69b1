import { ACTION_LISTEN_NAME } from 'src/core/domain/domain-constants';
import { defineEvent } from 'src/core/events/define-event';
import { eventBase, type EventBase, type EventBaseInit } from 'src/core/events/event-base';

/** `user_featurization`: whether the previous user turn was featurised by text or by intent. */
export interface DefinePrevUserUtteredFeaturization extends EventBase {
  readonly type: 'user_featurization';
  readonly useTextForFeaturization: boolean | null;
}

export function definePrevUserUtteredFeaturization(
  init: EventBaseInit & { readonly useTextForFeaturization: boolean | null },
): DefinePrevUserUtteredFeaturization {
  return {
    type: 'user_featurization',
    ...eventBase(init),
    useTextForFeaturization: init.useTextForFeaturization,
  };
}

export const DEFINE_PREV_USER_UTTERED_FEATURIZATION_KIND =
  defineEvent<DefinePrevUserUtteredFeaturization>({
    type: 'user_featurization',
    decode: (raw, base) => {
      const flag = raw.use_text_for_featurization;
      return definePrevUserUtteredFeaturization({
        ...base,
        useTextForFeaturization: typeof flag === 'boolean' ? flag : null,
      });
    },
    encode: (e, d) => {
      d.use_text_for_featurization = e.useTextForFeaturization;
    },
    apply: (e, state) => {
      // Featurisation belongs to the latest user message, which is always after action_listen.
      if (state.latestActionName !== ACTION_LISTEN_NAME) return;
      state.latestUserUseText = e.useTextForFeaturization;
    },
    example: {
      event: 'user_featurization',
      timestamp: 1700000000.5,
      use_text_for_featurization: true,
    },
  });
