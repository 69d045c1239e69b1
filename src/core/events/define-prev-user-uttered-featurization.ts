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
