import { type JsonObject } from 'src/core/events/event-base';
import {
  emptyPrediction,
  PRIORITY,
  type Policy,
  type PolicyPrediction,
  type PredictionInput,
} from 'src/core/policies/policy';
import { advanceFlows, isFlowFrame } from './flow-executor';
import { FlowsList } from './flows-list';

/**
 * Rasa Pro's chain: RulePolicy 4, IntentlessPolicy 5, EnterpriseSearchPolicy 6, FlowPolicy
 * "search + 1" = 7, the highest built-in priority.
 */
export const FLOW_POLICY_PRIORITY = PRIORITY.RULE + 3;

export interface FlowPolicyOptions {
  /** Timestamps (seconds) of the events the policy makes; default: the wall clock. */
  readonly now?: () => number;
  /** Ids of new stack frames; default: 8 random characters. */
  readonly newFrameId?: () => string;
}

/**
 * Rasa Pro's FlowPolicy: runs the flows on the dialogue stack (`advanceFlows`) and predicts the
 * action the next step asks for, with confidence 1.0. Abstains (all zeros) when the stack is
 * empty or its top frame is not a flow's (chitchat / search frames belong to other policies).
 * Not trainable: built from its config and the assistant's flows, serialised as config only.
 *
 * The executor's events (stack moves, flow events, slots) are the prediction's
 * `optionalEvents`, as in Rasa: the ensemble applies them only when this policy wins, because
 * they describe the way to the predicted action. `actionMetadata` holds `active_flow` and
 * `step_id`, which the action's `action` and `bot` events carry.
 */
export class FlowPolicy implements Policy {
  readonly type = 'FlowPolicy';
  readonly scoresOnly = false;

  constructor(
    readonly flows: FlowsList = FlowsList.empty(),
    readonly priority: number = FLOW_POLICY_PRIORITY,
    private readonly options: FlowPolicyOptions = {},
  ) {}

  /** From a config.yml entry (`priority` is the only key read) and the flows. */
  static fromConfig(params: JsonObject, flows: FlowsList, options?: FlowPolicyOptions): FlowPolicy {
    const priority = typeof params.priority === 'number' ? params.priority : FLOW_POLICY_PRIORITY;
    return new FlowPolicy(flows, priority, options);
  }

  /** From `toJSON()`; the flows are stored apart from the policy. */
  static fromJSON(json: JsonObject, flows: FlowsList, options?: FlowPolicyOptions): FlowPolicy {
    return FlowPolicy.fromConfig(json, flows, options);
  }

  toJSON(): JsonObject {
    return { type: this.type, priority: this.priority };
  }

  /** The flows read only the stack and slots, not the state history. */
  historyNeeded(): number {
    return 0;
  }

  predict(input: PredictionInput, name: string): PolicyPrediction {
    const size = input.actionNames.length;
    const frames = input.tracker.stack;
    const top = frames[frames.length - 1] as JsonObject | undefined;
    if (!isFlowFrame(top)) return emptyPrediction(size, name, this.priority);
    const prediction = advanceFlows({
      tracker: input.tracker,
      flows: this.flows,
      domain: input.domain,
      now: input.now ?? this.options.now ?? (() => Date.now() / 1000),
      ...(this.options.newFrameId ? { newFrameId: this.options.newFrameId } : {}),
    });
    const probabilities = new Array<number>(size).fill(0);
    const index =
      prediction.actionName === null ? -1 : input.actionNames.indexOf(prediction.actionName);
    if (index >= 0) probabilities[index] = 1;
    // Written out rather than `emptyPrediction(…, overrides)`: that makes a second list of
    // zeros and a copy of the prediction, for every step of every flow turn.
    return {
      probabilities,
      policyName: name,
      priority: this.priority,
      events: [],
      optionalEvents: prediction.events,
      isEndToEndPrediction: false,
      isNoUserPrediction: false,
      hideRuleTurn: false,
      inTrainingData: false,
      actionMetadata: { ...prediction.metadata },
    };
  }
}
