import { Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { type Flow, type FlowStep, type StepNext } from './flow';
import { FlowsList } from './flows-list';
import { readFlowsYaml } from './flows-reader';
import {
  assertValidFlowsStructure,
  flowStructureErrors,
  flowsListStructureErrors,
  validateFlows,
} from './flows-validation';

const base = { idGiven: true, description: null, metadata: null };
const action = (id: string, name: string, next: StepNext | null = 'END'): FlowStep => ({
  ...base,
  id,
  next,
  kind: 'action',
  action: name,
});
const link = (id: string, target: string, next: StepNext | null = null): FlowStep => ({
  ...base,
  id,
  next,
  kind: 'link',
  link: target,
});
const call = (id: string, target: string): FlowStep => ({
  ...base,
  id,
  next: 'END',
  kind: 'call',
  call: target,
});
const collect = (id: string, slot: string): FlowStep => ({
  ...base,
  id,
  next: 'END',
  kind: 'collect',
  collect: slot,
  utter: `utter_ask_${slot}`,
  collectAction: `action_ask_${slot}`,
  askBeforeFilling: false,
  resetAfterFlowEnds: true,
  rejections: [],
});
const mk = (id: string, steps: FlowStep[], extra: Partial<Flow> = {}): Flow => ({
  id,
  name: id,
  description: `flow ${id}`,
  guard: null,
  nluTrigger: [],
  alwaysIncludeInPrompt: null,
  persistedSlots: [],
  runPatternCompleted: true,
  steps,
  filePath: 'data/flows.yml',
  builtIn: false,
  ...extra,
});

describe('flowStructureErrors', () => {
  it.each<[string, Flow, string]>([
    ['an empty flow', mk('f', []), "Flow 'f' does not have any steps."],
    [
      'an empty branch list',
      mk('f', [action('a', 'x', [{ if: 'slots.a', then: [] }, { else: 'END' }])]),
      "Encountered an empty step sequence in flow 'f' and step 'a'.",
    ],
    [
      'a link step with a next',
      mk('f', [link('l', 'g', 'END')]),
      "Link step 'l' in flow 'f' has a `next` but as a link step is not allowed to have one.",
    ],
    [
      'a step without next',
      mk('f', [action('a', 'x', null)]),
      "Step 'a' in flow 'f' is missing a `next`. As a last step of a branch, it is required to have one.",
    ],
    [
      'a next to an unknown step',
      mk('f', [action('a', 'x', 'nope')]),
      "Step with id 'nope' could not be resolved. 'Step 'a' in flow 'f' referenced this step but it does not exist.",
    ],
    [
      'an unreachable step',
      mk('f', [action('a', 'x'), action('b', 'y')]),
      "Step 'b' in flow 'f' can not be reached from the start step.",
    ],
    [
      'an if without else',
      mk('f', [action('a', 'x', [{ if: 'slots.a', then: 'END' }])]),
      "Step 'a' in flow 'f' is missing an `else` branch.",
    ],
    [
      'a reserved step id',
      mk('f', [action('END', 'x', 'START')]),
      "Step 'END' in flow 'f' is using the reserved id 'END'. Please use a different id for your step.",
    ],
    [
      'a NEXT: step id',
      mk('f', [action('NEXT:x', 'x')]),
      "Step 'NEXT:x' in flow 'f' is using the reserved id 'NEXT:x'.",
    ],
    [
      'a bad slot name',
      mk('f', [collect('c', '1slot')]),
      "For the flow 'f', collect step 'c' the slot name was set to : 1slot, while it has to adhere to the following pattern",
    ],
    [
      'a bad flow id',
      mk('f.x', [action('a', 'x')]),
      'The flow ID was set to : f.x, while it has to adhere to the following pattern: [a-zA-Z0-9_][a-zA-Z0-9_-]*?.',
    ],
    [
      'a duplicate step id',
      mk('f', [action('a', 'x', [{ if: 'slots.a', then: [action('a', 'y')] }, { else: 'END' }])]),
      "Step 'a' in flow 'f' is using the same id as another step.",
    ],
  ])('%s', (_what, flow, message) => {
    const errors = flowStructureErrors(flow);
    expect(errors.some((e) => e.startsWith(message))).toBe(true);
  });

  it('accepts a well-formed flow with a loop back to START', () => {
    expect(
      flowStructureErrors(
        mk('f', [action('a', 'x', [{ if: 'slots.a', then: 'START' }, { else: 'END' }])]),
      ),
    ).toEqual([]);
  });
});

describe('flowsListStructureErrors', () => {
  const errorsOf = (...flows: Flow[]): string[] => flowsListStructureErrors(new FlowsList(flows));

  it('rejects an intent that triggers two flows', () => {
    const t = { nluTrigger: [{ intent: 'greet', confidenceThreshold: 0 }] };
    expect(errorsOf(mk('a', [action('s', 'x')], t), mk('b', [action('s', 'x')], t))).toEqual([
      "The intent 'greet' is used as 'nlu_trigger' in multiple flows: ['a', 'b']. An intent should just trigger one flow, not multiple.",
    ]);
  });

  it('rejects calling a flow that links, and calling a missing flow', () => {
    expect(errorsOf(mk('a', [call('c', 'b')]), mk('b', [link('l', 'a')]))).toEqual([
      "Flow 'a' is calling another flow (call step). The flow that is getting called ('b') is using a link step, which is not allowed. Either this flow can not be called or the link step in c needs to be removed.",
    ]);
    expect(errorsOf(mk('a', [call('c', 'zz')]))).toEqual([
      "The call step 'c' in flow 'a' is invalid: there is no flow with the id 'zz'.",
    ]);
  });

  it('rejects links to missing flows, except the human handoff pattern', () => {
    expect(errorsOf(mk('a', [link('l', 'zz')]))).toEqual([
      "Flow 'zz' is linked from flow 'a' in step 'l', but it doesn't exist. Please make sure that a flow with id 'zz' exists.",
    ]);
    expect(errorsOf(mk('a', [link('l', 'pattern_human_handoff')]))).toEqual([]);
    expect(errorsOf(mk('pattern_x', [link('l', 'pattern_chitchat')]))).toEqual([]);
  });

  it('rejects user flows calling or linking patterns', () => {
    const p = mk('pattern_search', [action('s', 'x')]);
    expect(errorsOf(mk('a', [link('l', 'pattern_search')]), p)).toEqual([
      expect.stringContaining(
        "Step 'l' in flow 'a' is referencing a pattern 'pattern_search', which is not allowed. Patterns cannot be used as a target in link steps",
      ),
    ]);
    expect(errorsOf(mk('a', [call('c', 'pattern_search')]), p)).toEqual([
      "Step 'c' in flow 'a' is referencing a pattern 'pattern_search', which is not allowed. Patterns can not be used as a target for a call step.",
    ]);
    expect(errorsOf(mk('a', [link('l', 'pattern_chitchat')]))).toHaveLength(2);
  });

  it('rejects patterns calling anything, linking patterns, and pattern_internal_error linking', () => {
    const user = mk('u', [action('s', 'x')]);
    expect(errorsOf(mk('pattern_x', [call('c', 'u')]), user)).toEqual([
      "Step 'c' in pattern 'pattern_x' is referencing a flow which is not allowed. Patterns can not use call steps.",
    ]);
    expect(
      errorsOf(mk('pattern_x', [link('l', 'pattern_y')]), mk('pattern_y', [action('s', 'x')])),
    ).toEqual([
      "Step 'l' in pattern 'pattern_x' is referencing a pattern which is not allowed. Patterns can not use link steps to other patterns. Exception: patterns can link to 'pattern_human_handoff'.",
    ]);
    expect(errorsOf(mk('pattern_x', [link('l', 'u')]), user)).toEqual([]);
    expect(errorsOf(mk('pattern_internal_error', [link('l', 'u')]), user)).toEqual([
      "Step 'l' in pattern 'pattern_internal_error' is referencing a flow which is not allowed. 'pattern_internal_error' can not use link steps to user flows.",
    ]);
  });
});

describe('assertValidFlowsStructure', () => {
  it('throws TRAINING_DATA.INVALID naming the file and the flow', () => {
    let error: unknown;
    try {
      assertValidFlowsStructure(new FlowsList([mk('f', [])]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DialogueError);
    expect((error as DialogueError).code).toBe('TRAINING_DATA.INVALID');
    expect((error as DialogueError).message).toBe(
      "data/flows.yml: Flow 'f' does not have any steps.",
    );
    expect((error as DialogueError).details).toMatchObject({ file: 'data/flows.yml', flow: 'f' });
    expect(() =>
      assertValidFlowsStructure(new FlowsList([mk('f', [action('a', 'x')])])),
    ).not.toThrow();
  });
});

describe('validateFlows', () => {
  const domain = Domain.fromObject({
    slots: {
      name: { type: 'text', mappings: [] },
      items: { type: 'list', mappings: [] },
      color: { type: 'categorical', values: ['red', 'Blue'], mappings: [] },
      ok: { type: 'bool', mappings: [] },
      preset: { type: 'text', initial_value: 'x', mappings: [] },
      both: { type: 'text', mappings: [] },
      asked: { type: 'text', mappings: [] },
    },
    responses: {
      utter_ask_name: [{ text: 'name?' }],
      utter_ask_items: [{ text: 'items?' }],
      utter_ask_color: [{ text: 'color?' }],
      utter_ask_ok: [{ text: 'ok?' }],
      utter_ask_both: [{ text: 'both?' }],
      utter_no: [{ text: 'no' }],
    },
    actions: ['action_ask_both', 'action_ask_asked', 'action_do'],
  });
  const validate = (yaml: string): { errors: string[]; warnings: string[] } =>
    validateFlows(new FlowsList(readFlowsYaml(yaml, 'data/flows.yml')), domain);
  const flowWith = (steps: string, extra = ''): string =>
    `flows:\n  f:\n    description: d\n${extra}    steps:\n${steps}`;

  it('accepts flows that fit the domain', () => {
    expect(
      validate(
        flowWith(
          `      - collect: name
      - collect: asked
      - collect: preset
      - collect: color
        rejections:
          - if: slots.color = "red" or slots.color is null
            utter: utter_no
      - set_slots:
          - name: null
      - action: action_do
      - action: "{{context.x}}"
      - action: utter_no
        next:
          - if: slots.ok = true and context.y
            then: END
          - else: END
`,
          '    if: slots.ok is true\n    persisted_slots: [name]\n',
        ),
      ),
    ).toEqual({ errors: [], warnings: [] });
  });

  it.each<[string, string, string]>([
    [
      'a collected slot not in the domain',
      '      - collect: nope\n',
      "data/flows.yml: The slot 'nope' is collected in step 'f_0_collect_nope' of flow 'f', but it is not listed in the domain slots.",
    ],
    [
      'a collected list slot',
      '      - collect: items\n',
      "The slot 'items' collected in step 'f_0_collect_items' of flow 'f' is a list slot",
    ],
    [
      'a collect with a response and an action',
      '      - collect: both\n',
      "has both a response 'utter_ask_both' and an action 'action_ask_both'",
    ],
    [
      'a collect without a way to ask',
      '      - collect: ok\n        utter: utter_missing\n',
      "has neither a response 'utter_missing' nor an action 'action_ask_ok'",
    ],
    [
      'a set slot not in the domain',
      '      - set_slots:\n          - nope: 1\n',
      "The slot 'nope' is set in step 'f_0_set_slots' of flow 'f', but it is not listed in the domain slots.",
    ],
    [
      'a set list slot',
      '      - set_slots:\n          - items: []\n',
      "The slot 'items' set in step 'f_0_set_slots' of flow 'f' is a list slot",
    ],
    [
      'an unknown action',
      '      - action: action_nope\n',
      "The action 'action_nope' is used in step 'f_0_action_nope' of flow 'f', but it is not listed in the domain file.",
    ],
    [
      'a link to a missing flow',
      '      - link: nope\n',
      "The flow 'nope' linked in step 'f_0_link_nope' of flow 'f' does not exist.",
    ],
    [
      'an invalid predicate',
      '      - action: action_do\n        next:\n          - if: slots.name = = 3\n            then: END\n          - else: END\n',
      "Detected invalid condition 'slots.name = = 3' in step 'f_0_action_do' of flow 'f'",
    ],
    [
      'a predicate without namespace',
      '      - action: action_do\n        next:\n          - if: name = "x"\n            then: END\n          - else: END\n',
      `Predicate 'name = "x"' in step 'f_0_action_do' of flow 'f' does not use the namespace 'slots.' or 'context.'`,
    ],
    [
      'a predicate reading an unknown slot',
      '      - action: action_do\n        next:\n          - if: slots.nope\n            then: END\n          - else: END\n',
      "The slot 'nope' is used in step 'f_0_action_do' of flow 'f', but it is not listed in the domain slots.",
    ],
    [
      'a categorical slot compared with another value',
      '      - collect: color\n        rejections:\n          - if: slots.color = "green"\n            utter: utter_no\n',
      "The value 'green' compared with the categorical slot 'color' in a rejection of step 'f_0_collect_color' of flow 'f' is not one of its values (red, Blue).",
    ],
    [
      'a boolean slot compared with a string',
      '      - collect: ok\n        rejections:\n          - if: "\'yes\' = slots.ok"\n            utter: utter_no\n',
      "The boolean slot 'ok' is compared with 'yes' in a rejection of step 'f_0_collect_ok' of flow 'f'",
    ],
  ])('reports %s', (_what, steps, message) => {
    const { errors } = validate(flowWith(steps));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(message);
    expect(errors[0]).toMatch(/^data\/flows\.yml: /);
  });

  it('checks flow guards and accepts the link-only guard', () => {
    expect(validate(flowWith('      - action: action_do\n', '    if: false\n')).errors).toEqual([]);
    expect(
      validate(flowWith('      - action: action_do\n', '    if: slots.nope\n')).errors,
    ).toEqual([
      "data/flows.yml: The slot 'nope' is used in the flow guard of flow 'f', but it is not listed in the domain slots.",
    ]);
  });

  it('checks persisted slots and the deprecated reset_after_flow_ends', () => {
    expect(
      validate(flowWith('      - collect: name\n', '    persisted_slots: [color]\n')).errors,
    ).toEqual([
      "data/flows.yml: Flow 'f' lists 'color' under 'persisted_slots', but only slots the flow collects or sets can be persisted.",
    ]);
    const conflict = validate(
      flowWith(
        '      - collect: name\n        reset_after_flow_ends: false\n',
        '    persisted_slots: [name]\n',
      ),
    );
    expect(conflict.errors).toEqual([
      "data/flows.yml: Flow 'f' sets 'persisted_slots' and its collect step for slot 'name' sets 'reset_after_flow_ends'; use only 'persisted_slots'.",
    ]);
    const deprecated = validate(
      flowWith('      - collect: name\n        reset_after_flow_ends: false\n'),
    );
    expect(deprecated.errors).toEqual([]);
    expect(deprecated.warnings).toEqual([
      expect.stringContaining("uses 'reset_after_flow_ends', which is deprecated"),
    ]);
  });

  it('warns about a rejection response the domain lacks', () => {
    const r = validate(
      flowWith(
        '      - collect: name\n        rejections:\n          - if: slots.name = "x"\n            utter: utter_gone\n',
      ),
    );
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      "data/flows.yml: The response 'utter_gone' of a rejection in step 'f_0_collect_name' of flow 'f' is not defined in the domain.",
    ]);
  });

  it('requires unique names and (punctuation-insensitive) descriptions', () => {
    const r = validate(`flows:
  a:
    name: Same
    description: Do it.
    steps:
      - action: action_do
  b:
    name: Same
    description: Do it!
    steps:
      - action: action_do
`);
    expect(r.errors).toEqual([
      "data/flows.yml: Detected duplicate flow name 'Same' for flow id 'b' (also used by flow 'a'). Flow names must be unique.",
      "data/flows.yml: Detected duplicate flow description for flow id 'b' (same as flow 'a'). Flow descriptions must be unique.",
    ]);
  });

  it('skips validation with a warning when there are no flows', () => {
    expect(validateFlows(FlowsList.empty(), domain)).toEqual({
      errors: [],
      warnings: ['No flows were found in the data files. Will not proceed with flow validation.'],
    });
  });
});
