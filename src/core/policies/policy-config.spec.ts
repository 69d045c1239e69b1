import { policyConfigWarnings } from 'src/core/policies/policy-config';

describe('policyConfigWarnings', () => {
  it('names every key a policy ignores, and what it reads', () => {
    const warnings = policyConfigWarnings([
      {
        name: 'TEDPolicy',
        max_history: 5,
        epochs: 100,
        constrain_similarities: true,
        model_confidence: 'softmax',
      },
      { name: 'RulePolicy', core_fallback_threshold: 0.4 },
    ]);
    expect(warnings).toEqual([
      "config.yml: TEDPolicy ignores 'constrain_similarities', 'model_confidence' (it reads only 'max_history', 'epochs', 'priority').",
    ]);
  });

  it('says out loud that UnexpecTEDIntentPolicy never predicts action_unlikely_intent', () => {
    const warnings = policyConfigWarnings([{ name: 'UnexpecTEDIntentPolicy', max_history: 5 }]);
    expect(warnings[0]).toContain(
      "UnexpecTEDIntentPolicy is accepted but never predicts 'action_unlikely_intent'",
    );
    expect(warnings[1]).toContain("UnexpecTEDIntentPolicy ignores 'max_history'");
  });

  it('has nothing to say about a config that only uses honoured keys', () => {
    expect(
      policyConfigWarnings([{ name: 'MemoizationPolicy', max_history: 3 }, { name: 'RulePolicy' }]),
    ).toEqual([]);
    expect(policyConfigWarnings(null)).toEqual([]);
  });
});
