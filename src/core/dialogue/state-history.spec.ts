import {
  mlStatesForEvents,
  NO_RULE_ONLY_DATA,
  stateCount,
  statesForEvents,
  trackerStateCount,
  trackerStates,
  trackerStateViews,
  type RuleOnlyData,
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
  const hideRuleTurn = rng.next() < 0.3;
  if (r < 0.25) {
    return actionExecuted({
      name: pick(['action_listen', 'utter_greet']),
      timestamp,
      hideRuleTurn,
    });
  }
  if (r < 0.4) {
    return actionExecuted({ name: pick(['order_form', 'action_other']), timestamp, hideRuleTurn });
  }
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

  const ruleOnly: RuleOnlyData = { slots: ['size'], loops: ['order_form'] };
  it.each([1, 2, 3, 4, 5, 6])(
    'the ML view (hidden rule turns, rule-only data) equals a recomputation too (seed %i)',
    (seed) => {
      const rng = new Random(100 + seed);
      const data = seed % 2 === 0 ? NO_RULE_ONLY_DATA : ruleOnly;
      const tracker = new DialogueStateTracker(`m${seed}`, domain.slots);
      for (let t = 1; t <= 120; t++) {
        tracker.update(randomEvent(rng, t));
        const applied = appliedEvents(tracker.events);
        if (rng.next() < 0.2) trackerStates(tracker, domain); // the plain view alone, sometimes
        if (rng.next() < 0.6) {
          const window = rng.next() < 0.5 ? null : 1 + Math.floor(rng.next() * 4);
          const views = trackerStateViews(tracker, domain, data, window);
          expect(views.states).toEqual(statesForEvents(tracker.senderId, applied, domain, window));
          expect(views.count).toBe(stateCount(applied));
          const ml = mlStatesForEvents(tracker.senderId, applied, domain, data);
          expect(views.ml.count).toBe(ml.length);
          expect(views.ml.states).toEqual(window === null ? ml : ml.slice(-window));
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

describe("the ML policies' view of a conversation (Rasa ignore_rule_only_turns)", () => {
  const at = (name: string, hideRuleTurn = false) =>
    actionExecuted({ name, timestamp: 1, hideRuleTurn });
  const says = (intent: string) =>
    userUttered({ text: intent, intent: { name: intent }, timestamp: 1 });

  it('leaves hidden rule turns out, as if they had not happened', () => {
    const withRule = [
      at('action_listen'),
      says('greet'),
      at('utter_greet'),
      at('action_listen'),
      says('stop'),
      at('action_other', true),
      at('action_listen', true),
      says('inform'),
    ];
    const without = [
      at('action_listen'),
      says('greet'),
      at('utter_greet'),
      at('action_listen'),
      says('inform'),
    ];
    expect(mlStatesForEvents('a', withRule, domain, NO_RULE_ONLY_DATA)).toEqual(
      statesForEvents('a', without, domain),
    );
  });

  it('drops rule-only slots and loops, and keeps everything when nothing is hidden', () => {
    const events = [
      at('action_listen'),
      says('inform'),
      at('order_form'),
      activeLoop({ name: 'order_form', timestamp: 1 }),
      slotSet({ name: 'size', value: 'S', timestamp: 1 }),
      slotSet({ name: 'city', value: 'Rome', timestamp: 1 }),
    ];
    expect(mlStatesForEvents('b', events, domain, NO_RULE_ONLY_DATA)).toEqual(
      statesForEvents('b', events, domain),
    );
    const ml = mlStatesForEvents('b', events, domain, { slots: ['size'], loops: ['order_form'] });
    expect(ml[ml.length - 1]).toEqual({
      user: { intent: 'inform' },
      prev_action: { action_name: 'order_form' },
      slots: { city: [1] },
    });
  });

  it('after a hidden turn, takes the previous action and user input of the last visible state', () => {
    // Traced by hand through Rasa's states_for_tracker_history: the hidden answer is replaced
    // by the action before it, and the user input goes as the last visible state had none.
    const events = [
      at('action_listen'),
      says('greet'),
      at('utter_greet', true),
      at('action_other'),
    ];
    expect(mlStatesForEvents('c', events, domain, NO_RULE_ONLY_DATA)).toEqual([
      {},
      { prev_action: { action_name: 'action_listen' } },
      { prev_action: { action_name: 'action_other' } },
    ]);
  });

  it("keeps a loop's happy path hidden while the loop runs, whatever the next action says", () => {
    const events = [
      at('action_listen'),
      says('inform'),
      at('order_form', true),
      activeLoop({ name: 'order_form', timestamp: 1 }),
      at('action_listen'),
      says('inform'),
    ];
    expect(mlStatesForEvents('d', events, domain, NO_RULE_ONLY_DATA)).toEqual([
      {},
      {
        user: { intent: 'inform' },
        prev_action: { action_name: 'action_listen' },
        active_loop: { name: 'order_form' },
      },
    ]);
  });
});
