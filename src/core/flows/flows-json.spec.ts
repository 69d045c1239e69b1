import { flowsToJson } from './flows-json';
import { FlowsList } from './flows-list';
import { readFlowsYaml } from './flows-reader';

describe('flowsToJson', () => {
  it('writes every step kind, resolved links and the optional flow keys', () => {
    const flows = readFlowsYaml(
      `flows:
  a:
    name: A flow
    description: d
    if: slots.x
    always_include_in_prompt: false
    persisted_slots: [x]
    run_pattern_completed: false
    steps:
      - id: first
        set_slots:
          - x: 1
        description: set it
        metadata: {note: n}
      - noop: true
        next:
          - if: slots.x
            then: first
          - else:
              - call: b
                next: a_3_link_b
      - link: b
  b:
    description: e
    steps:
      - action: act
`,
      'f.yml',
    );
    const [a, b] = flowsToJson(new FlowsList(flows));
    expect(a).toEqual({
      id: 'a',
      steps: [
        {
          id: 'first',
          set_slots: [{ x: 1 }],
          description: 'set it',
          next: 'a_1_noop',
          metadata: { note: 'n', line_numbers: '10-14' },
        },
        {
          id: 'a_1_noop',
          noop: true,
          next: [
            { if: 'slots.x', then: 'first' },
            {
              else: [
                {
                  id: 'a_2_call_b',
                  call: 'b',
                  next: 'a_3_link_b',
                  metadata: { line_numbers: '20-21' },
                },
              ],
            },
          ],
          metadata: { line_numbers: '15-21' },
        },
        { id: 'a_3_link_b', link: 'b', metadata: { line_numbers: '22-22' } },
      ],
      name: 'A flow',
      description: 'd',
      if: 'slots.x',
      always_include_in_prompt: false,
      file_path: 'f.yml',
      persisted_slots: ['x'],
      run_pattern_completed: false,
    });
    expect(b).not.toHaveProperty('persisted_slots');
    expect(b).not.toHaveProperty('name');
    expect(b).not.toHaveProperty('if');
    expect(b).not.toHaveProperty('nlu_trigger');
    expect(b).not.toHaveProperty('always_include_in_prompt');
  });
});
