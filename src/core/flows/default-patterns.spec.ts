import { Domain } from 'src/core/domain/domain';
import { type JsonObject } from 'src/core/events/event-base';
import {
  CALM_BUILT_IN_ACTIONS,
  DEFAULT_PATTERN_RESPONSES,
  defaultPatternFlows,
  flowsDomainData,
  mergeFlowsDomainData,
  withDefaultPatterns,
} from './default-patterns';
import { FlowsList } from './flows-list';
import { readFlowsYaml } from './flows-reader';
import { assertValidFlowsStructure, validateFlows } from './flows-validation';

const userFlow = readFlowsYaml(
  'flows:\n  pattern_completed:\n    description: mine\n    steps:\n      - action: utter_bye\n  hello:\n    description: hi\n    steps:\n      - action: utter_bye\n',
  'data/flows.yml',
);

describe('default patterns', () => {
  it('are the classic set, read as real flows', () => {
    const ids = defaultPatternFlows().map((f) => f.id);
    expect(ids).toEqual([
      'pattern_cancel_flow',
      'pattern_cannot_handle',
      'pattern_chitchat',
      'pattern_clarification',
      'pattern_code_change',
      'pattern_collect_information',
      'pattern_completed',
      'pattern_continue_interrupted',
      'pattern_correction',
      'pattern_human_handoff',
      'pattern_internal_error',
      'pattern_restart',
      'pattern_search',
      'pattern_session_start',
      'pattern_skip_question',
      'pattern_repeat_bot_messages',
    ]);
    for (const f of defaultPatternFlows()) {
      expect(f).toMatchObject({ builtIn: true, filePath: null });
    }
    const collect = new FlowsList(defaultPatternFlows());
    expect(collect.allSteps('pattern_collect_information').map((s) => [s.id, s.next])).toEqual([
      ['start', 'pattern_collect_information_1_validate_{{context.collect}}'],
      [
        'pattern_collect_information_1_validate_{{context.collect}}',
        [{ if: 'slots.{{context.collect}} is not null', then: 'END' }, { else: 'ask_collect' }],
      ],
      ['ask_collect', 'pattern_collect_information_3_{{context.collect_action}}'],
      [
        'pattern_collect_information_3_{{context.collect_action}}',
        'pattern_collect_information_4_action_listen',
      ],
      ['pattern_collect_information_4_action_listen', 'start'],
    ]);
    expect(collect.flow('pattern_restart')?.nluTrigger).toEqual([
      { intent: 'restart', confidenceThreshold: 0 },
    ]);
  });

  it('are added only with at least one user flow, user flows replacing them by id', () => {
    expect(withDefaultPatterns([]).isEmpty).toBe(true);
    const flows = withDefaultPatterns(userFlow);
    expect(flows.flows.slice(0, 2).map((f) => f.id)).toEqual(['pattern_completed', 'hello']);
    expect(flows.flows.filter((f) => f.id === 'pattern_completed')).toHaveLength(1);
    expect(flows.flow('pattern_completed')?.description).toBe('mine');
    expect(flows.flows).toHaveLength(2 + defaultPatternFlows().length - 1);
    expect(() => assertValidFlowsStructure(flows)).not.toThrow();
  });

  it('carry their responses with Rasa’s texts, jinja ones marked as templates', () => {
    expect(DEFAULT_PATTERN_RESPONSES.utter_ask_rephrase).toEqual([
      { text: 'I’m sorry I am unable to understand you, could you please rephrase?' },
    ]);
    expect(DEFAULT_PATTERN_RESPONSES.utter_flow_cancelled_rasa).toEqual([
      {
        text: 'Okay, stopping {{ context.canceled_name }}.',
        metadata: { rephrase: true, template: 'jinja' },
      },
    ]);
    expect(DEFAULT_PATTERN_RESPONSES.utter_corrected_previous_input?.[0]?.text).toBe(
      "Ok, I am updating {{ context.corrected_slots.keys()|join(', ') }} to {{ context.corrected_slots.values()|join(', ') }} respectively.",
    );
    for (const [name, variations] of Object.entries(DEFAULT_PATTERN_RESPONSES)) {
      for (const v of variations) {
        const templated = /\{\{|\{%/.test(String(v.text));
        expect([name, (v.metadata as JsonObject | undefined)?.template === 'jinja']).toEqual([
          name,
          templated,
        ]);
      }
    }
  });
});

describe('flowsDomainData', () => {
  it('is empty without flows', () => {
    expect(flowsDomainData(FlowsList.empty())).toEqual({ responses: {}, slots: {}, actions: [] });
  });

  it('gives the pattern responses and slots, flow actions and the built-in CALM actions', () => {
    const flows = withDefaultPatterns(userFlow);
    const data = flowsDomainData(flows);
    expect(Object.keys(data.responses)).toEqual(Object.keys(DEFAULT_PATTERN_RESPONSES));
    expect(data.slots.confirm_correction).toEqual({
      type: 'bool',
      mappings: [{ type: 'from_llm' }],
    });
    expect(data.actions).toEqual([
      ...CALM_BUILT_IN_ACTIONS,
      ...flows.flows.map((f) => `flow_${f.id}`),
    ]);
    expect(data.actions).toContain('flow_hello');
    expect(data.actions).toContain('action_trigger_search');
  });

  it('merges into a raw domain with the user domain winning, and the patterns validate against it', () => {
    const flows = withDefaultPatterns(userFlow);
    const raw = mergeFlowsDomainData(
      {
        responses: { utter_bye: [{ text: 'bye' }], utter_ask_rephrase: [{ text: 'again?' }] },
        slots: { confirm_correction: { type: 'text', mappings: [] } },
        actions: ['action_custom', 'action_cancel_flow'],
      },
      flowsDomainData(flows),
    );
    expect((raw.responses as JsonObject).utter_ask_rephrase).toEqual([{ text: 'again?' }]);
    expect((raw.slots as JsonObject).confirm_correction).toEqual({ type: 'text', mappings: [] });
    const actions = raw.actions as string[];
    expect(actions.slice(0, 2)).toEqual(['action_custom', 'action_cancel_flow']);
    expect(actions.filter((a) => a === 'action_cancel_flow')).toHaveLength(1);
    const domain = Domain.fromObject(raw);
    expect(domain.actionNamesOrTexts).toContain('flow_pattern_search');
    expect(validateFlows(flows, domain)).toEqual({ errors: [], warnings: [] });
  });
});
