import { DialogueError } from 'src/core/errors/dialogue-error';
import { type CollectStep, type Flow, type FlowStep } from './flow';
import { allSteps } from './flows-list';
import { findStep, readFlowsFiles, readFlowsYaml, resolveStepReference } from './flows-reader';

function one(yaml: string): Flow {
  const flows = readFlowsYaml(yaml, 'data/flows.yml');
  expect(flows).toHaveLength(1);
  return flows[0] as Flow;
}

function readError(yaml: string): DialogueError {
  try {
    readFlowsYaml(yaml, 'data/flows.yml');
  } catch (e) {
    expect(e).toBeInstanceOf(DialogueError);
    expect((e as DialogueError).code).toBe('TRAINING_DATA.INVALID');
    return e as DialogueError;
  }
  throw new Error('expected an error');
}

const flow = (body: string): string => `flows:\n  f:\n    description: d\n${body}`;

describe('readFlowsYaml', () => {
  it('gives default ids by the pre-order walk and makes implicit links explicit', () => {
    const f = one(
      flow(`    steps:
      - noop: true
        next:
          - if: slots.a
            then:
              - set_slots:
                  - a: 1
                  - b: x
                next: f_3_after
          - else:
              - link: other
      - action: after
      - call: sub
      - collect: c
`),
    );
    const ids = allSteps(f.steps).map((s) => s.id);
    expect(ids).toEqual([
      'f_0_noop',
      'f_1_set_slots',
      'f_2_link_other',
      'f_3_after',
      'f_4_call_sub',
      'f_5_collect_c',
    ]);
    const [noop, action, call, collect] = f.steps as FlowStep[];
    expect(action?.next).toBe('f_4_call_sub');
    expect(call?.next).toBe('f_5_collect_c');
    expect(collect?.next).toBe('END');
    const branches = noop?.next as readonly { then?: FlowStep[]; else?: FlowStep[] }[];
    expect(branches[1]?.else?.[0]).toMatchObject({ kind: 'link', link: 'other', next: null });
    expect(branches[0]?.then?.[0]).toMatchObject({
      kind: 'set_slots',
      slots: [
        { name: 'a', value: 1 },
        { name: 'b', value: 'x' },
      ],
    });
  });

  it('leaves the last step of a nested branch without a next (an error)', () => {
    const e = readError(
      flow(`    steps:
      - noop: true
        next:
          - if: slots.a
            then:
              - action: a
          - else: END
`),
    );
    expect(e.message).toBe(
      "data/flows.yml:2: Step 'f_1_a' in flow 'f' is missing a `next`. As a last step of a branch, it is required to have one.",
    );
  });

  it('reads flow properties, their defaults and both nlu_trigger forms', () => {
    const f = one(`version: "3.1"
flows:
  my_flow-x:
    description: d
    if: false
    always_include_in_prompt: true
    persisted_slots: [a]
    run_pattern_completed: false
    nlu_trigger:
      - intent: greet
      - intent:
          name: hello
          confidence_threshold: 0.7
    steps:
      - collect: a
`);
    expect(f).toMatchObject({
      id: 'my_flow-x',
      name: 'my flow x',
      nameGiven: false,
      guard: 'false',
      alwaysIncludeInPrompt: true,
      persistedSlots: ['a'],
      runPatternCompleted: false,
      filePath: 'data/flows.yml',
      builtIn: false,
      nluTrigger: [
        { intent: 'greet', confidenceThreshold: 0 },
        { intent: 'hello', confidenceThreshold: 0.7 },
      ],
    });
    const plain = one(flow('    name: Given\n    steps:\n      - action: a\n'));
    expect(plain).toMatchObject({
      name: 'Given',
      nameGiven: true,
      guard: null,
      alwaysIncludeInPrompt: null,
      persistedSlots: [],
      runPatternCompleted: true,
      nluTrigger: [],
    });
  });

  it('reads collect steps with their defaults and options', () => {
    const f = one(
      flow(`    steps:
      - collect: amount
      - collect: name
        description: the name
        utter: utter_custom
        ask_before_filling: true
        reset_after_flow_ends: false
        rejections:
          - if: true
            utter: utter_no
        metadata: {a: 1}
`),
    );
    const [first, second] = f.steps as CollectStep[];
    expect(first).toMatchObject({
      utter: 'utter_ask_amount',
      collectAction: 'action_ask_amount',
      askBeforeFilling: false,
      resetAfterFlowEnds: true,
      rejections: [],
      idGiven: false,
    });
    expect(second).toMatchObject({
      utter: 'utter_custom',
      collectAction: 'action_ask_name',
      description: 'the name',
      askBeforeFilling: true,
      resetAfterFlowEnds: false,
      rejections: [{ if: 'true', utter: 'utter_no' }],
      metadata: { a: 1, line_numbers: '6-14' },
    });
  });

  it('stringifies YAML booleans in if conditions', () => {
    const f = one(
      flow(`    steps:
      - noop: true
        next:
          - if: true
            then: END
          - else: END
`),
    );
    expect(f.steps[0]?.next).toEqual([{ if: 'true', then: 'END' }, { else: 'END' }]);
  });

  it('resolves references written with the older {idx}_{postfix} ids', () => {
    const f = one(
      flow(`    steps:
      - collect: a
      - action: b
        next: 0_collect_a
`),
    );
    expect(f.steps[1]?.next).toBe('f_0_collect_a');
    expect(findStep(f, '1_b')?.id).toBe('f_1_b');
    expect(findStep(f, 'f_1_b')?.id).toBe('f_1_b');
    expect(resolveStepReference('f', 'END', new Set())).toBe('END');
    expect(resolveStepReference('f', 'missing', new Set(['f_missing']))).toBe('missing');
  });

  it('reads a document without flows as no flows', () => {
    expect(readFlowsYaml('nlu: []\n', 'x.yml')).toEqual([]);
    expect(readFlowsYaml('flows:\n', 'x.yml')).toEqual([]);
    expect(readFlowsYaml('', 'x.yml')).toEqual([]);
  });

  describe('schema errors name the file, the line and the flow', () => {
    it.each([
      ['flows as a list', 'flows:\n  - a\n', 'Found a list but expected a dictionary of flows.'],
      [
        'unknown flow key',
        flow('    foo: 1\n    steps: []\n'),
        "Additional properties are not allowed ('foo' was unexpected)",
      ],
      [
        'missing description',
        'flows:\n  f:\n    steps:\n      - action: a\n',
        "'description' is a required property",
      ],
      ['missing steps', 'flows:\n  f:\n    description: d\n', "'steps' is a required property"],
      [
        'steps not a list',
        flow('    steps: {a: 1}\n'),
        'Found a dictionary but expected a list of steps.',
      ],
      [
        'step without a type key',
        flow('    steps:\n      - id: x\n'),
        'At least one of the following properties is required: action, collect, link, call, set_slots, noop',
      ],
      [
        'step with two type keys',
        flow('    steps:\n      - action: a\n        collect: b\n'),
        "Not a valid 'steps' definition.",
      ],
      [
        'noop without next',
        flow('    steps:\n      - noop: true\n'),
        "'next' is a required property",
      ],
      [
        'unknown key of an action step',
        flow('    steps:\n      - action: a\n        utter: b\n'),
        "Additional properties are not allowed ('utter' was unexpected)",
      ],
      [
        'unknown key of a collect step',
        flow('    steps:\n      - collect: a\n        foo: b\n'),
        "Additional properties are not allowed ('foo' was unexpected)",
      ],
      [
        'empty nlu_trigger',
        flow('    nlu_trigger: []\n    steps:\n      - action: a\n'),
        'nlu_trigger: [] should be non-empty',
      ],
      [
        'nlu_trigger item without intent',
        flow('    nlu_trigger:\n      - name: x\n    steps:\n      - action: a\n'),
        "Not a valid 'nlu_trigger' definition.",
      ],
      [
        'a next item that is neither if/then nor else',
        flow('    steps:\n      - action: a\n        next:\n          - if: x\n'),
        "Not a valid 'next' definition. Expected else block or if-then block.",
      ],
      [
        'a wrongly typed property',
        flow('    run_pattern_completed: maybe\n    steps:\n      - action: a\n'),
        'run_pattern_completed: Found `maybe` but expected a boolean.',
      ],
      [
        'a rejection without utter',
        flow('    steps:\n      - collect: a\n        rejections:\n          - if: x\n'),
        "'utter' is a required property",
      ],
    ])('%s', (_what, yaml, message) => {
      const e = readError(yaml);
      expect(e.message).toContain(message);
      expect(e.message).toMatch(/^data\/flows\.yml:\d+: /);
      if (!yaml.startsWith('flows:\n  -')) expect(e.message).toContain("flow 'f'");
    });

    it('runs the structural checks of each flow', () => {
      const e = readError(flow('    steps: []\n'));
      expect(e.message).toBe("data/flows.yml:2: Flow 'f' does not have any steps.");
    });

    it('rejects a flow id used twice in one file', () => {
      const e = readError(
        'flows:\n  f:\n    description: d\n    steps: []\n  f:\n    description: d\n',
      );
      expect(e.message).toBe('data/flows.yml:5: invalid YAML: Map keys must be unique');
    });
  });
});

describe('readFlowsFiles', () => {
  const file = (path: string, id: string): { path: string; text: string } => ({
    path,
    text: `flows:\n  ${id}:\n    description: d ${path}\n    steps:\n      - action: a\n`,
  });

  it('reads every file in order', () => {
    const flows = readFlowsFiles([file('a.yml', 'one'), file('b.yml', 'two')]);
    expect(flows.map((f) => [f.id, f.filePath])).toEqual([
      ['one', 'a.yml'],
      ['two', 'b.yml'],
    ]);
  });

  it("rejects an id used in two files with Rasa's message", () => {
    expect(() => readFlowsFiles([file('a.yml', 'one'), file('b.yml', 'one')])).toThrow(
      "Flow 'one' is used in both `a.yml` and `b.yml`. Please make sure flow IDs are unique across all files.",
    );
    expect(() => readFlowsFiles([file('a.yml', 'one'), file('a.yml', 'one')])).toThrow(
      "Flow 'one' is used twice in `a.yml`. Please make sure flow IDs are unique across all files.",
    );
  });

  it('checks the rules across flows', () => {
    const linking = {
      path: 'c.yml',
      text: 'flows:\n  c:\n    description: c\n    steps:\n      - link: nowhere\n',
    };
    expect(() => readFlowsFiles([linking])).toThrow(
      "c.yml: Flow 'nowhere' is linked from flow 'c' in step 'c_0_link_nowhere', but it doesn't exist.",
    );
  });
});
