import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { actionExecuted } from 'src/core/events/action-executed';
import { activeLoop } from 'src/core/events/active-loop';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { readStoriesYaml } from 'src/core/training-data/stories-yaml-reader';

/** A bot whose rules break restrict_rules (test/fixtures/rules). */
const RULES_BOT = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'rules');

function rulesBot(): { domain: Domain; text: string } {
  return {
    domain: Domain.fromYaml(readFileSync(join(RULES_BOT, 'domain.yml'), 'utf8')),
    text: readFileSync(join(RULES_BOT, 'data', 'rules.yml'), 'utf8'),
  };
}

describe('RulePolicy training checks', () => {
  it('reports the rule with two user turns (restrict_rules)', () => {
    const { domain, text } = rulesBot();
    const { blocks } = readStoryFiles([{ text, file: 'data/rules.yml' }]);
    let error: unknown;
    try {
      trainDialogue(blocks, domain, [{ name: 'RulePolicy' }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DialogueError);
    expect((error as DialogueError).code).toBe('DIALOGUE.INVALID_RULE');
    expect((error as DialogueError).message).toContain(
      "rule 'detailed answer did not help - go on' (data/rules.yml:",
    );
    expect((error as DialogueError).message).not.toContain("'short answer did not help'");
  });

  it('reports contradicting rules with both names', () => {
    const domain = Domain.fromObject({
      intents: ['greet'],
      responses: { utter_a: [{ text: 'a' }], utter_b: [{ text: 'b' }] },
    });
    const text = [
      'rules:',
      '- rule: one',
      '  steps:',
      '  - intent: greet',
      '  - action: utter_a',
      '- rule: two',
      '  steps:',
      '  - intent: greet',
      '  - action: utter_a',
      '  - action: utter_b',
      '',
    ].join('\n');
    const { blocks } = readStoryFiles([{ text, file: 'rules.yml' }]);
    expect(() => trainDialogue(blocks, domain, [{ name: 'RulePolicy' }])).toThrow(
      /the prediction of the action 'action_listen' in rule 'one' .* is contradicting with rule\(s\) 'two'/,
    );
  });

  describe('incomplete rules', () => {
    const domain = Domain.fromObject({
      intents: ['start', 'again', 'ask'],
      slots: { done: { type: 'bool', mappings: [{ type: 'custom' }] } },
      forms: { some_form: { required_slots: [] } },
      actions: ['action_check'],
      responses: { utter_x: [{ text: 'x' }], utter_y: [{ text: 'y' }] },
    });
    const train = (rules: string[]) => {
      const { blocks } = readStoryFiles([
        { text: ['rules:', ...rules, ''].join('\n'), file: 'r.yml' },
      ]);
      return () => trainDialogue(blocks, domain, [{ name: 'RulePolicy' }]);
    };
    const setsSlot = [
      '- rule: check sets done',
      '  steps:',
      '  - intent: start',
      '  - action: action_check',
      '  - slot_was_set:',
      '    - done: true',
      '  - action: utter_x',
    ];
    const activatesForm = [
      '- rule: activate',
      '  steps:',
      '  - intent: start',
      '  - action: some_form',
      '  - active_loop: some_form',
    ];

    it('reports an action that does not set the slots it sets in another rule', () => {
      expect(
        train([
          ...setsSlot,
          '- rule: check forgets done',
          '  steps:',
          '  - intent: again',
          '  - action: action_check',
          '  - action: utter_y',
        ]),
      ).toThrow(
        /Incomplete rules found[\s\S]*the action 'action_check' in rule 'check forgets done' \(r\.yml:\d+\) does not set some of the slots that it sets in other rules: 'done'/,
      );
    });

    it('reports a form that does not set its active loop as in another rule', () => {
      const error = (() => {
        try {
          train([
            ...activatesForm,
            '- rule: form then utter',
            '  steps:',
            '  - intent: again',
            '  - action: some_form',
            '  - action: utter_y',
          ])();
        } catch (e) {
          return e as DialogueError;
        }
        return null;
      })();
      expect(error?.code).toBe('DIALOGUE.INVALID_RULE');
      expect(error?.message).toContain("the form 'some_form' in rule 'form then utter' (r.yml:");
      expect(error?.message).toContain(
        "does not set the 'active_loop' that it sets in other rules: 'some_form'",
      );
    });

    it('accepts the same rules ending with wait_for_user_input: false, or with the slot set to null', () => {
      expect(
        train([
          ...setsSlot,
          '- rule: check at the end',
          '  steps:',
          '  - intent: again',
          '  - action: action_check',
          '  wait_for_user_input: false',
          '- rule: check sets nothing on purpose',
          '  steps:',
          '  - intent: ask',
          '  - action: action_check',
          '  - slot_was_set:',
          '    - done: null',
          '  - action: utter_y',
        ]),
      ).not.toThrow();
      expect(train(activatesForm)).not.toThrow();
    });
  });

  it('restrict_rules: false accepts rules with several user turns', () => {
    const { domain, text } = rulesBot();
    const { blocks } = readStoryFiles([{ text, file: 'data/rules.yml' }]);
    expect(() =>
      trainDialogue(blocks, domain, [
        { name: 'RulePolicy', restrict_rules: false, check_for_contradictions: false },
      ]),
    ).not.toThrow();
  });
});

describe('stories reader', () => {
  it('names file and line of a bad step', () => {
    const text = 'stories:\n- story: s\n  steps:\n  - intent: greet\n  - bogus: x\n';
    expect(() => readStoriesYaml(text, 'stories.yml')).toThrow(
      /^stories\.yml:5: story 's': unknown step/,
    );
  });

  it('reads or, slot_was_set, checkpoints and rule options', () => {
    const text = [
      'stories:',
      '- story: a',
      '  steps:',
      '  - intent: greet',
      '  - or:',
      '    - intent: affirm',
      '    - intent: thank',
      '  - slot_was_set:',
      '    - name: Ann',
      '  - checkpoint: c',
      'rules:',
      '- rule: r',
      '  conversation_start: true',
      '  wait_for_user_input: false',
      '  condition:',
      '  - active_loop: null',
      '  steps:',
      '  - intent: greet',
      '  - action: utter_greet',
      '',
    ].join('\n');
    const { blocks } = readStoriesYaml(text, 'f.yml');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]?.steps.map((s) => s.kind)).toEqual(['user', 'or', 'slot', 'checkpoint']);
    expect(blocks[1]).toMatchObject({
      isRule: true,
      conversationStart: true,
      waitForUserInput: false,
      conditions: [{ kind: 'active_loop', name: 'should_not_be_set' }],
    });
  });
});

describe('RulePolicy rule-only data and hidden rule turns', () => {
  const domain = Domain.fromObject({
    intents: ['greet', 'bot_challenge', 'mood_unhappy', 'order'],
    slots: {
      vip: { type: 'bool', mappings: [] },
      mood: { type: 'text', mappings: [] },
      item: { type: 'text', mappings: [] },
    },
    forms: { order_form: { required_slots: ['item'] } },
    responses: {
      utter_greet: [{ text: 'hi' }],
      utter_iamabot: [{ text: 'bot' }],
      utter_cheer_up: [{ text: 'cheer' }],
      utter_vip: [{ text: 'vip' }],
    },
  });
  const text = [
    'stories:',
    '- story: sad',
    '  steps:',
    '  - intent: greet',
    '  - action: utter_greet',
    '  - slot_was_set:',
    '    - mood: low',
    '  - intent: mood_unhappy',
    '  - action: utter_cheer_up',
    'rules:',
    '- rule: greet also by rule',
    '  steps:',
    '  - intent: greet',
    '  - action: utter_greet',
    '- rule: challenge',
    '  steps:',
    '  - intent: bot_challenge',
    '  - action: utter_iamabot',
    '- rule: vip',
    '  steps:',
    '  - slot_was_set:',
    '    - vip: true',
    '  - intent: bot_challenge',
    '  - action: utter_vip',
    '- rule: order',
    '  steps:',
    '  - intent: order',
    '  - action: order_form',
    '  - active_loop: order_form',
    '',
  ].join('\n');

  function train(): PolicyEnsemble {
    const { blocks } = readStoryFiles([{ text, file: 'data.yml' }]);
    return trainDialogue(blocks, domain, [{ name: 'MemoizationPolicy' }, { name: 'RulePolicy' }])
      .ensemble;
  }

  function predictAfter(ensemble: PolicyEnsemble, events: DialogueEvent[]) {
    const tracker = new DialogueStateTracker('t', domain.slots);
    for (const e of events) tracker.update(e);
    return ensemble.predict(tracker, domain);
  }

  const listen = () => actionExecuted({ name: 'action_listen', timestamp: 1 });
  const user = (intent: string) =>
    userUttered({ text: intent, intent: { name: intent }, timestamp: 1 });

  it('learns the slots and loops that only rules mention', () => {
    expect(train().ruleOnly).toEqual({ slots: ['vip'], loops: ['order_form'] });
  });

  it('marks predictions of rules that no story contains, and of default intents and loops', () => {
    const ensemble = train();
    const challenged = predictAfter(ensemble, [listen(), user('bot_challenge')]);
    expect([challenged.actionName, challenged.hideRuleTurn]).toEqual(['utter_iamabot', true]);
    // The greet rule predicts what the story does: its turn stays visible.
    const greeted = predictAfter(ensemble, [listen(), user('greet')]);
    expect(greeted.actionName).toBe('utter_greet');
    expect(greeted.hideRuleTurn).toBe(false);
    const restart = predictAfter(ensemble, [listen(), user('restart')]);
    expect([restart.actionName, restart.hideRuleTurn]).toEqual(['action_restart', true]);
    const ordered = predictAfter(ensemble, [listen(), user('order')]);
    expect([ordered.actionName, ordered.hideRuleTurn]).toEqual(['order_form', true]);
    const inLoop = predictAfter(ensemble, [
      listen(),
      user('order'),
      actionExecuted({ name: 'order_form', timestamp: 1 }),
      activeLoop({ name: 'order_form', timestamp: 1 }),
    ]);
    expect([inLoop.actionName, inLoop.hideRuleTurn]).toEqual(['action_listen', true]);
  });

  it('keeps what it learned through the model JSON', () => {
    const ensemble = train();
    const loaded = PolicyEnsemble.fromJSON(JSON.parse(JSON.stringify(ensemble.toJSON())));
    expect(loaded.ruleOnly).toEqual({ slots: ['vip'], loops: ['order_form'] });
    const challenged = predictAfter(loaded, [listen(), user('bot_challenge')]);
    expect(challenged.hideRuleTurn).toBe(true);
  });

  it('lets memoization match a story across a hidden rule turn', () => {
    const ensemble = train();
    const hidden = [
      listen(),
      user('greet'),
      actionExecuted({ name: 'utter_greet', timestamp: 1 }),
      slotSet({ name: 'mood', value: 'low', timestamp: 1 }),
      listen(),
      user('bot_challenge'),
      actionExecuted({ name: 'utter_iamabot', timestamp: 1, hideRuleTurn: true }),
      actionExecuted({ name: 'action_listen', timestamp: 1, hideRuleTurn: true }),
      user('mood_unhappy'),
    ];
    const prediction = predictAfter(ensemble, hidden);
    expect([prediction.actionName, prediction.policyName]).toEqual([
      'utter_cheer_up',
      'policy_0_MemoizationPolicy',
    ]);
    // The same turn, not hidden, is part of the history: memoization knows no such story.
    const visible = hidden.map((e) =>
      e.type === 'action' ? actionExecuted({ name: e.name, timestamp: 1 }) : e,
    );
    expect(predictAfter(ensemble, visible).policyName).not.toBe('policy_0_MemoizationPolicy');
  });
});
