import { statesForEvents, type DialogueState } from 'src/core/dialogue/dialogue-state';
import { type TrainingTracker } from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import { type StatesAndLabel } from 'src/core/policies/policy';
import { appliedEvents } from 'src/core/tracker/applied-events';

/** States before each executed action, with the action as label (first action included). */
export function examplesOf(tracker: TrainingTracker, domain: Domain): StatesAndLabel[] {
  const applied = appliedEvents(tracker.events);
  const states = statesForEvents(tracker.name, applied, domain);
  const out: StatesAndLabel[] = [];
  let k = 0;
  for (const e of applied) {
    if (e.type !== 'action') continue;
    out.push({ states: states.slice(0, k + 1), label: e.name ?? e.actionText ?? '' });
    k++;
  }
  return out;
}

/** The last `maxHistory` states (all when null). */
export function lastStates(
  states: readonly DialogueState[],
  maxHistory: number | null,
): DialogueState[] {
  if (maxHistory === null || states.length <= maxHistory) return [...states];
  return states.slice(states.length - maxHistory);
}
