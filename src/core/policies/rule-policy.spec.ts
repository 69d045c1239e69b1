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
