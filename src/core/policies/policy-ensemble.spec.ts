import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { actionExecutionRejected } from 'src/core/events/action-execution-rejected';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { emptyPrediction, type Policy, type PolicyPrediction } from './policy';
import { PolicyEnsemble } from './policy-ensemble';

const domain = Domain.fromObject({
  intents: ['greet'],
  responses: { utter_a: [{ text: 'a' }], utter_b: [{ text: 'b' }], utter_c: [{ text: 'c' }] },
});
const size = domain.actionNamesOrTexts.length;

/** A policy that answers a fixed prediction and counts how often it is asked. */
class FixedPolicy implements Policy {
  readonly type: string;
  calls = 0;

  constructor(
    readonly priority: number,
    readonly scoresOnly: boolean,
    private readonly answer: Omit<PolicyPrediction, 'policyName' | 'priority'>,
  ) {
    this.type = scoresOnly ? 'ScoresPolicy' : 'EventsPolicy';
  }

  predict(_input: unknown, name: string): PolicyPrediction {
    this.calls++;
    return { ...this.answer, policyName: name, priority: this.priority };
  }

  historyNeeded(): number {
    return 1;
  }

  toJSON(): Record<string, never> {
    return {};
  }
}

function scores(action: string, confidence: number): number[] {
  const p = new Array<number>(size).fill(0);
  p[domain.actionNamesOrTexts.indexOf(action)] = confidence;
  return p;
}

function fixed(
  priority: number,
  scoresOnly: boolean,
  probabilities: number[],
  extra: Partial<PolicyPrediction> = {},
): FixedPolicy {
  const { policyName: _n, priority: _p, ...base } = emptyPrediction(size, '', 0);
  return new FixedPolicy(priority, scoresOnly, { ...base, probabilities, ...extra });
}

function tracker(events: DialogueEvent[] = []): DialogueStateTracker {
  return DialogueStateTracker.fromEvents('t', events, domain);
}

/** The choice of asking every policy (the definition the lazy ensemble must match). */
function eagerChoice(policies: FixedPolicy[], rejected: number) {
  const all = policies.map((p, i) => {
    const q = p.predict({}, `policy_${i}_${p.type}`);
    if (rejected < 0) return q;
    const probabilities = [...q.probabilities];
    probabilities[rejected] = 0;
    return { ...q, probabilities };
  });
  const noUser = all.some((p) => p.isNoUserPrediction);
  const e2e = all.some((p) => p.isEndToEndPrediction);
  let best: PolicyPrediction | null = null;
  let bestConf = -1;
  for (const p of all) {
    if (noUser ? !p.isNoUserPrediction : e2e && !p.isEndToEndPrediction) continue;
    const conf = Math.max(0, ...p.probabilities);
    if (best === null || conf > bestConf || (conf === bestConf && p.priority > best.priority)) {
      best = p;
      bestConf = conf;
    }
  }
  const winner = best as PolicyPrediction;
  const events = [...all.flatMap((p) => p.events), ...winner.optionalEvents];
  return { policyName: winner.policyName, probabilities: winner.probabilities, events };
}

describe('PolicyEnsemble', () => {
  it('does not ask a scores-only policy that a confidence-1 prediction already beats', () => {
    const memo = fixed(3, true, scores('utter_a', 1));
    const ted = fixed(1, true, scores('utter_b', 0.9));
    const rules = fixed(4, false, scores('utter_c', 0));
    const prediction = PolicyEnsemble.of([memo, ted, rules]).predict(tracker(), domain);
    expect(prediction.actionName).toBe('utter_a');
    expect(prediction.policyName).toBe('policy_0_ScoresPolicy');
    expect([memo.calls, ted.calls, rules.calls]).toEqual([1, 0, 1]);
  });

  it('asks it when nothing is certain, and when a rejected action lowers the certain one', () => {
    const memo = fixed(3, true, scores('utter_a', 1));
    const ted = fixed(1, true, scores('utter_b', 0.9));
    const rejected = tracker([
      userUttered({ timestamp: 1, intent: { name: 'greet', confidence: 1 } }),
      actionExecutionRejected({ timestamp: 2, name: 'utter_a' }),
    ]);
    const prediction = PolicyEnsemble.of([memo, ted]).predict(rejected, domain);
    expect(prediction.actionName).toBe('utter_b');
    expect(ted.calls).toBe(1);
  });

  it('chooses as asking every policy would, on random predictions', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    const actions = ['utter_a', 'utter_b', 'utter_c', 'action_listen'];
    let skipped = 0;
    for (let round = 0; round < 500; round++) {
      const policies = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const scoresOnly = random() < 0.6;
        const probabilities = scores(pick(actions), pick([0, 0.3, 0.8, 1, 1]));
        probabilities[domain.actionNamesOrTexts.indexOf(pick(actions))] = pick([0, 0.5, 1]);
        const extra: Partial<PolicyPrediction> = scoresOnly
          ? {}
          : {
              isNoUserPrediction: random() < 0.3,
              events: random() < 0.5 ? [slotSet({ timestamp: 3, name: 'x', value: round })] : [],
              optionalEvents: random() < 0.5 ? [actionExecuted({ timestamp: 4, name: 'y' })] : [],
            };
        return fixed(pick([1, 2, 3, 3, 4, 6]), scoresOnly, probabilities, extra);
      });
      const rejectedAction = random() < 0.2 ? pick(actions) : null;
      const events: DialogueEvent[] =
        rejectedAction === null
          ? []
          : [
              userUttered({ timestamp: 1, intent: { name: 'greet', confidence: 1 } }),
              actionExecutionRejected({ timestamp: 2, name: rejectedAction }),
            ];
      const rejected =
        rejectedAction === null ? -1 : domain.actionNamesOrTexts.indexOf(rejectedAction);
      const expected = eagerChoice(policies, rejected);
      for (const p of policies) p.calls = 0;
      const got = PolicyEnsemble.of(policies).predict(tracker(events), domain);
      expect({
        policyName: got.policyName,
        probabilities: got.probabilities,
        events: got.events,
      }).toEqual(expected);
      skipped += policies.filter((p) => p.calls === 0).length;
    }
    // The shortcut is exercised, not only the full path.
    expect(skipped).toBeGreaterThan(50);
  });
});
