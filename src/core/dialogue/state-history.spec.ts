import {
  stateCount,
  statesForEvents,
  trackerStateCount,
  trackerStates,
} from 'src/core/dialogue/dialogue-state';
import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { actionReverted } from 'src/core/events/action-reverted';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { restarted } from 'src/core/events/restarted';
import { sessionStarted } from 'src/core/events/session-started';
import { slotSet } from 'src/core/events/slot-set';
import { userUtteranceReverted } from 'src/core/events/user-utterance-reverted';
import { userUttered } from 'src/core/events/user-uttered';
import { Random } from 'src/core/nlu/random';
import { appliedEvents } from 'src/core/tracker/applied-events';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

const domain = Domain.fromObject({
  intents: ['greet', 'inform', 'stop'],
  entities: ['city'],
  slots: {
    city: { type: 'text', mappings: [] },
    size: { type: 'categorical', values: ['S', 'M'], mappings: [] },
  },
  forms: { order_form: { required_slots: ['city', 'size'] } },
  responses: { utter_greet: [{ text: 'hi' }] },
  actions: ['action_other'],
});

/** A random but plausible event (loops, restarts, rewinds and undos included). */
function randomEvent(rng: Random, t: number): DialogueEvent {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.next() * xs.length)] as T;
  const r = rng.next();
  const timestamp = t;
  if (r < 0.25) return actionExecuted({ name: pick(['action_listen', 'utter_greet']), timestamp });
  if (r < 0.4) return actionExecuted({ name: pick(['order_form', 'action_other']), timestamp });
  if (r < 0.6) {
    return userUttered({
      text: 'x',
      intent: { name: pick(['greet', 'inform', 'stop']) },
      entities: rng.next() < 0.5 ? [{ entity: 'city', value: 'Rome' }] : [],
      timestamp,
    });
  }
  if (r < 0.72) {
    return slotSet({ name: pick(['city', 'size']), value: pick(['S', 'M', null]), timestamp });
  }
  if (r < 0.8) return activeLoop({ name: pick(['order_form', null]), timestamp });
  if (r < 0.84) return actionExecutionRejected({ name: 'order_form', timestamp });
  if (r < 0.88) return userUtteranceReverted({ timestamp });
  if (r < 0.92) return actionReverted({ timestamp });
  if (r < 0.95) return restarted({ timestamp });
  return sessionStarted({ timestamp });
}

describe('incremental applied events and state history of a live tracker', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'equal a recomputation from the whole log after every event (seed %i)',
    (seed) => {
      const rng = new Random(seed);
      const tracker = new DialogueStateTracker(`s${seed}`, domain.slots);
      for (let t = 1; t <= 120; t++) {
        tracker.update(randomEvent(rng, t));
        const applied = appliedEvents(tracker.events);
        expect(tracker.appliedEvents()).toEqual(applied);
        // asked at irregular moments, so the history sometimes catches up several events at once
        if (rng.next() < 0.6) {
          const window = rng.next() < 0.5 ? null : 1 + Math.floor(rng.next() * 4);
          expect(trackerStates(tracker, domain, window)).toEqual(
            statesForEvents(tracker.senderId, applied, domain, window),
          );
          expect(trackerStateCount(tracker, domain)).toBe(stateCount(applied));
        }
      }
    },
  );

  it('starts the history again for another domain', () => {
    const other = Domain.fromObject({ intents: ['greet'], slots: {} });
    const tracker = new DialogueStateTracker('d', domain.slots);
    tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
    tracker.update(slotSet({ name: 'city', value: 'Rome', timestamp: 2 }));
    tracker.update(actionExecuted({ name: 'utter_greet', timestamp: 3 }));
    const withSlots = trackerStates(tracker, domain);
    expect(trackerStates(tracker, other)).toEqual(
      statesForEvents('d', tracker.appliedEvents(), other),
    );
    expect(trackerStates(tracker, other)).not.toEqual(withSlots);
  });
});
