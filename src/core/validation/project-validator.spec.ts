import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { trainDialogue } from 'src/core/processor/train-dialogue';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';
import { readStoriesYaml } from 'src/core/training-data/stories-yaml-reader';
import {
  storyConflicts,
  unknownActions,
  validateProject,
  type ValidationIssue,
} from 'src/core/validation/project-validator';

const DOMAIN = `
version: "3.1"
intents: [order_tea, thanks, unused_intent]
entities: [flavour, unused_entity]
slots:
  flavour:
    type: text
    mappings:
      - type: from_entity
        entity: flavour
  size:
    type: text
    mappings:
      - type: from_entity
        entity: cup_size
forms:
  tea_form:
    required_slots: [flavour, sugar]
responses:
  utter_which_tea: [{ text: Which tea? }]
  utter_enjoy: [{ text: Enjoy! }]
  utter_never_said: [{ text: Nobody runs me. }]
actions: [action_brew, utter_missing_response]
`;

const NLU = `
version: "3.1"
nlu:
  - intent: order_tea
    examples: |
      - a cup of [mint](flavour) tea please
      - some tea
  - intent: thanks
    examples: |
      - thanks
      - some tea
  - intent: not_in_domain
    examples: |
      - what is this
  - intent: thanks
    examples: |
      - cheers [big](cup_size)
`;

const STORIES = `
version: "3.1"
stories:
  - story: order
    steps:
      - intent: order_tea
      - action: utter_which_tea
      - action: action_brew
  - story: order and say thanks
    steps:
      - intent: order_tea
      - action: utter_which_tea
      - action: utter_enjoy
  - story: uses what the domain lacks
    steps:
      - intent: greet_me
      - action: utter_no_such_response
      - action: action_not_declared
      - active_loop: missing_form
      - slot_was_set:
          - no_such_slot: true
rules:
  - rule: thanks
    steps:
      - intent: thanks
      - action: utter_enjoy
      - active_loop: null
`;

function project() {
  return {
    domain: Domain.fromYaml(DOMAIN),
    nlu: readNluYaml(NLU, 'data/nlu.yml').data,
    blocks: readStoriesYaml(STORIES, 'data/stories.yml').blocks,
  };
}

const messages = (issues: readonly ValidationIssue[], severity: 'error' | 'warning') =>
  issues.filter((i) => i.severity === severity).map((i) => i.message);

describe('validateProject (rasa data validate)', () => {
  const issues = validateProject(project());
  const errors = messages(issues, 'error');
  const warnings = messages(issues, 'warning');

  it('reports intents used in NLU data or stories that the domain lacks as errors', () => {
    expect(errors).toContainEqual(expect.stringContaining("intent 'not_in_domain'"));
    expect(errors).toContainEqual(
      expect.stringMatching(
        /intent 'greet_me' is used in story 'uses what the domain lacks' \(data\/stories\.yml:\d+\)/,
      ),
    );
  });

  it('warns about declared intents without examples or stories, and unused responses', () => {
    expect(warnings).toContainEqual(
      expect.stringContaining(
        "intent 'unused_intent' is listed in the domain file, but is not found in the NLU",
      ),
    );
    expect(warnings).toContainEqual("The intent 'unused_intent' is not used in any story or rule.");
    expect(warnings).toContainEqual(
      "The utterance 'utter_never_said' is not used in any story or rule.",
    );
  });

  it('warns about one example labelled with two intents', () => {
    expect(warnings).toContainEqual(
      expect.stringContaining(
        "'some tea' was found labeled with multiple different intents in the training data: order_tea, thanks",
      ),
    );
  });

  it('reports undeclared entities once each and slot mappings of unknown entities', () => {
    expect(warnings).toContainEqual(
      expect.stringContaining("entity 'cup_size' is annotated in 1 NLU example"),
    );
    expect(errors).toContainEqual(
      expect.stringContaining("slot 'size' has a from_entity mapping for the entity 'cup_size'"),
    );
    expect(warnings).toContainEqual(
      expect.stringContaining(
        "entity 'unused_entity' is listed in the domain file but is not used",
      ),
    );
  });

  it('reports unknown actions, utterances without a response, forms and slots', () => {
    expect(errors).toContainEqual(
      expect.stringContaining(
        "action 'utter_missing_response' is listed in the domain's actions, but there is no response",
      ),
    );
    expect(errors).toContainEqual(
      expect.stringContaining(
        "action 'utter_no_such_response' is used in story 'uses what the domain lacks'",
      ),
    );
    expect(errors).toContainEqual(
      expect.stringContaining("action 'action_not_declared' is used in story"),
    );
    expect(errors).toContainEqual(expect.stringContaining("form 'missing_form' is used in story"));
    expect(errors).toContainEqual(
      expect.stringContaining("form 'tea_form' requires the slot 'sugar'"),
    );
    expect(errors).toContainEqual(expect.stringContaining("slot 'no_such_slot' is set in story"));
  });

  it("does not take a rule's `active_loop: null` for a form", () => {
    expect(errors.join('\n')).not.toContain('should_not_be_set');
  });

  it('finds the conflict between two stories that go on differently after the same turn', () => {
    expect(errors).toContainEqual(
      "Story structure conflict after action 'utter_which_tea':\n" +
        "  action_brew predicted in 'order'\n" +
        "  utter_enjoy predicted in 'order and say thanks'",
    );
  });

  it('with max_history 1 reads the same conflict; stories-only runs no other check', () => {
    const only = validateProject(project(), { storiesOnly: true, maxHistory: 1 });
    expect(only.every((i) => i.message.startsWith('Story structure conflict'))).toBe(true);
    expect(only.length).toBeGreaterThan(0);
  });

  it('finds no conflict where stories differ before the point they part', () => {
    const stories = readStoriesYaml(
      `
stories:
  - story: a
    steps: [{ intent: order_tea }, { action: utter_which_tea }, { intent: thanks }, { action: utter_enjoy }]
  - story: b
    steps: [{ intent: thanks }, { action: utter_enjoy }]
`,
      's.yml',
    ).blocks;
    expect(storyConflicts(stories, Domain.fromYaml(DOMAIN), null)).toEqual([]);
  });

  it('a clean project has no findings', () => {
    const domain = Domain.fromYaml(`
intents: [hi]
responses:
  utter_hi: [{ text: Hi! }]
`);
    const nlu = readNluYaml(
      'nlu:\n  - intent: hi\n    examples: |\n      - hi\n      - hello\n',
      'n.yml',
    ).data;
    const blocks = readStoriesYaml(
      'stories:\n  - story: s\n    steps: [{ intent: hi }, { action: utter_hi }]\n',
      's.yml',
    ).blocks;
    expect(validateProject({ domain, nlu, blocks })).toEqual([]);
  });
});

describe('training refuses actions the domain lacks (as Rasa does)', () => {
  it('names each unknown action with its block, file and line', () => {
    const { domain, blocks } = project();
    expect(unknownActions(blocks, domain).map((u) => u.name)).toEqual([
      'utter_no_such_response',
      'action_not_declared',
    ]);
    let thrown: unknown;
    try {
      trainDialogue(blocks, domain, [{ name: 'RulePolicy' }]);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DialogueError);
    expect((thrown as DialogueError).code).toBe('TRAINING_DATA.INVALID');
    expect((thrown as DialogueError).message).toMatch(
      /'action_not_declared' in story 'uses what the domain lacks' \(data\/stories\.yml:\d+\)/,
    );
  });
});
