import { readStoriesYaml } from 'src/core/training-data/stories-yaml-reader';

describe('readStoriesYaml: steps of Rasa Pro stories', () => {
  it('reads the commands of user steps and the stack steps of an exported CALM story and leaves them out', () => {
    const text = [
      'version: "3.1"',
      'stories:',
      '- story: c',
      '  steps:',
      '  - intent: book_repair',
      '    user: |-',
      '      fix my bike',
      '    commands:',
      '    - command: start flow',
      '      flow: book',
      '  - stack:',
      '    - op: add',
      '      path: /0',
      '      value: {frame_id: F1, flow_id: book, step_id: START, type: flow}',
      '  - action: utter_ask_bike',
      '',
    ].join('\n');
    const read = readStoriesYaml(text, 'stories.yml');
    const [story] = read.blocks;
    const kinds = JSON.stringify(story?.steps);
    expect(kinds).toContain('"kind":"user"');
    expect(kinds).toContain('fix my bike');
    expect(kinds).toContain('utter_ask_bike');
    expect(kinds).not.toContain('frame_id');
  });

  it('refuses a stack step that is not a list', () => {
    const text = 'stories:\n- story: c\n  steps:\n  - stack: nope\n';
    expect(() => readStoriesYaml(text, 'stories.yml')).toThrow(/'stack' must be a list/);
  });
});
