import {
  type CollectStep,
  type ConditionalBranch,
  type ElseBranch,
  type Flow,
  type FlowStep,
  isPatternFlow,
} from './flow';

/**
 * The flows of an assistant (user flows and the merged default patterns), with the lookups every
 * stage needs. Immutable.
 */
export class FlowsList {
  private readonly byId: ReadonlyMap<string, Flow>;
  private readonly steps: ReadonlyMap<string, ReadonlyMap<string, FlowStep>>;

  constructor(readonly flows: readonly Flow[]) {
    this.byId = new Map(flows.map((f) => [f.id, f]));
    this.steps = new Map(
      flows.map((f) => [f.id, new Map(allSteps(f.steps).map((s) => [s.id, s]))]),
    );
  }

  static empty(): FlowsList {
    return new FlowsList([]);
  }

  get isEmpty(): boolean {
    return this.flows.length === 0;
  }

  flow(id: string): Flow | undefined {
    return this.byId.get(id);
  }

  /** The step of a flow by its resolved id (not the synthetic START / END / NEXT: ids). */
  step(flowId: string, stepId: string): FlowStep | undefined {
    return this.steps.get(flowId)?.get(stepId);
  }

  /** User flows (not patterns), in order. */
  get userFlows(): readonly Flow[] {
    return this.flows.filter((f) => !isPatternFlow(f.id));
  }

  /** Every step of the flow, nested branch steps included, in the pre-order of default ids. */
  allSteps(flowId: string): readonly FlowStep[] {
    const flow = this.byId.get(flowId);
    return flow === undefined ? [] : allSteps(flow.steps);
  }

  /** The collect steps of a flow (nested ones included). */
  collectSteps(flowId: string): readonly CollectStep[] {
    return this.allSteps(flowId).filter((s): s is CollectStep => s.kind === 'collect');
  }
}

/** The steps in pre-order: a step, then the steps nested under its `next` branches. */
export function allSteps(steps: readonly FlowStep[]): FlowStep[] {
  const out: FlowStep[] = [];
  const walk = (list: readonly FlowStep[]): void => {
    for (const step of list) {
      out.push(step);
      if (Array.isArray(step.next)) {
        for (const branch of step.next as readonly (ConditionalBranch | ElseBranch)[]) {
          const target = 'then' in branch ? branch.then : branch.else;
          if (Array.isArray(target)) walk(target as readonly FlowStep[]);
        }
      }
    }
  };
  walk(steps);
  return out;
}
