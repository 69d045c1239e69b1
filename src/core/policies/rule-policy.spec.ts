import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { readStoriesYaml } from 'src/core/training-data/stories-yaml-reader';

const BOTS = join(__dirname, '..', '..', '..', '..', 'shared', 'bots');

function rulesBot(): { domain: Domain; text: string } {
  return {
    domain: Domain.fromYaml(readFileSync(join(BOTS, 'rules', 'domain.yml'), 'utf8')),
    text: readFileSync(join(BOTS, 'rules', 'data', 'rules.yml'), 'utf8'),
  };
}

describe('RulePolicy training checks', () => {
  it('reports the rules bot rule with two user turns (restrict_rules)', () => {
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
      "rule 'Detailed FAQ did not help - continue' (data/rules.yml:",
    );
    expect((error as DialogueError).message).not.toContain("'FAQ did not help'");
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
