import { Domain } from 'src/core/domain/domain';
import { type JsonObject } from 'src/core/events/event-base';
import { parse } from 'yaml';
import { flowsDomainData, mergeFlowsDomainData, withDefaultPatterns } from './default-patterns';
import { flowsToJson } from './flows-json';
import { readFlowsFiles } from './flows-reader';
import { validateFlows } from './flows-validation';

// The minimal NLU-triggered CALM assistant (domain and flows) of the reference notes.
const DOMAIN = `
version: "3.1"
intents: [greet, transfer_money, affirm, deny, stop]
entities: [recipient, amount]
slots:
  recipient:
    type: text
    mappings:
      - type: from_entity
        entity: recipient
  amount:
    type: float
    mappings:
      - type: from_entity
        entity: amount
  confirm_transfer:
    type: bool
    mappings:
      - type: from_intent
        intent: affirm
        value: true
        conditions: [{active_flow: transfer_money}]
      - type: from_intent
        intent: deny
        value: false
        conditions: [{active_flow: transfer_money}]
responses:
  utter_greet: [{text: "Hi! I can send money for you."}]
  utter_ask_recipient: [{text: "Who should receive the money?"}]
  utter_ask_amount: [{text: "How much do you want to send?"}]
  utter_invalid_amount: [{text: "The amount has to be more than zero."}]
  utter_ask_confirm_transfer:
    - text: "Send {amount} to {recipient}?"
      buttons:
        - {title: "Yes", payload: "/affirm"}
        - {title: "No", payload: "/deny"}
  utter_transfer_done: [{text: "Done, {amount} is on its way to {recipient}."}]
  utter_transfer_cancelled: [{text: "Okay, I did not send anything."}]
  utter_can_do_something_else: [{text: "Anything else?"}]   # overrides the pattern text
`;

const FLOWS = `flows:
  greet_user:
    description: Greet the user and say what the assistant can do.
    nlu_trigger:
      - intent: greet
    steps:
      - action: utter_greet
  transfer_money:
    description: Send money to a person.
    nlu_trigger:
      - intent:
          name: transfer_money
          confidence_threshold: 0.6
    steps:
      - collect: recipient
      - collect: amount
        rejections:
          - if: slots.amount <= 0
            utter: utter_invalid_amount
      - id: confirm
        collect: confirm_transfer
        ask_before_filling: true
        next:
          - if: slots.confirm_transfer
            then:
              - action: utter_transfer_done
                next: END
          - else:
              - action: utter_transfer_cancelled
                next: END
  pattern_cancel_flow:            # override a default pattern to add an NLU trigger
    description: Cancel the current flow when the user says stop.
    nlu_trigger:
      - intent: stop
    steps:
      - action: action_cancel_flow
      - action: utter_flow_cancelled_rasa
`;

function load(): { flows: ReturnType<typeof withDefaultPatterns>; domain: Domain } {
  const user = readFlowsFiles([{ path: 'data/flows.yml', text: FLOWS }]);
  const flows = withDefaultPatterns(user);
  const raw = mergeFlowsDomainData(parse(DOMAIN) as JsonObject, flowsDomainData(flows));
  return { flows, domain: Domain.fromObject(raw, 'domain.yml') };
}

describe('the minimal NLU-triggered CALM example', () => {
  it('reads the user flows and merges the default patterns the user does not replace', () => {
    const { flows } = load();
    const ids = flows.flows.map((f) => f.id);
    expect(ids.slice(0, 3)).toEqual(['greet_user', 'transfer_money', 'pattern_cancel_flow']);
    expect(ids.filter((i) => i === 'pattern_cancel_flow')).toHaveLength(1);
    expect(ids).toContain('pattern_collect_information');
    expect(ids).toContain('pattern_completed');
    expect(flows.flow('pattern_cancel_flow')?.builtIn).toBe(false);
    expect(flows.flow('pattern_completed')?.builtIn).toBe(true);
  });

  it('validates cleanly against its domain (merged with the patterns’ domain data)', () => {
    const { flows, domain } = load();
    expect(validateFlows(flows, domain)).toEqual({ errors: [], warnings: [] });
    // The user's response text wins over the pattern's default.
    expect(domain.responses.utter_can_do_something_else).toEqual([{ text: 'Anything else?' }]);
  });

  it('serialises as GET /flows returns it', () => {
    const { flows } = load();
    const json = flowsToJson(flows);
    const strip = (v: unknown): unknown =>
      JSON.parse(
        JSON.stringify(v, (k, val: unknown) => (k === 'metadata' ? undefined : val)),
      ) as unknown;
    expect(strip(json.slice(0, 3))).toEqual([
      {
        id: 'greet_user',
        steps: [{ id: 'greet_user_0_utter_greet', action: 'utter_greet', next: 'END' }],
        description: 'Greet the user and say what the assistant can do.',
        nlu_trigger: [{ intent: { name: 'greet', confidence_threshold: 0 } }],
        file_path: 'data/flows.yml',
        run_pattern_completed: true,
      },
      {
        id: 'transfer_money',
        steps: [
          {
            id: 'transfer_money_0_collect_recipient',
            collect: 'recipient',
            next: 'transfer_money_1_collect_amount',
            utter: 'utter_ask_recipient',
            ask_before_filling: false,
            reset_after_flow_ends: true,
            rejections: [],
          },
          {
            id: 'transfer_money_1_collect_amount',
            collect: 'amount',
            next: 'confirm',
            utter: 'utter_ask_amount',
            ask_before_filling: false,
            reset_after_flow_ends: true,
            rejections: [{ if: 'slots.amount <= 0', utter: 'utter_invalid_amount' }],
          },
          {
            id: 'confirm',
            collect: 'confirm_transfer',
            next: [
              {
                if: 'slots.confirm_transfer',
                then: [
                  {
                    id: 'transfer_money_3_utter_transfer_done',
                    action: 'utter_transfer_done',
                    next: 'END',
                  },
                ],
              },
              {
                else: [
                  {
                    id: 'transfer_money_4_utter_transfer_cancelled',
                    action: 'utter_transfer_cancelled',
                    next: 'END',
                  },
                ],
              },
            ],
            utter: 'utter_ask_confirm_transfer',
            ask_before_filling: true,
            reset_after_flow_ends: true,
            rejections: [],
          },
        ],
        description: 'Send money to a person.',
        nlu_trigger: [{ intent: { name: 'transfer_money', confidence_threshold: 0.6 } }],
        file_path: 'data/flows.yml',
        run_pattern_completed: true,
      },
      {
        id: 'pattern_cancel_flow',
        steps: [
          {
            id: 'pattern_cancel_flow_0_action_cancel_flow',
            action: 'action_cancel_flow',
            next: 'pattern_cancel_flow_1_utter_flow_cancelled_rasa',
          },
          {
            id: 'pattern_cancel_flow_1_utter_flow_cancelled_rasa',
            action: 'utter_flow_cancelled_rasa',
            next: 'END',
          },
        ],
        description: 'Cancel the current flow when the user says stop.',
        nlu_trigger: [{ intent: { name: 'stop', confidence_threshold: 0 } }],
        file_path: 'data/flows.yml',
        run_pattern_completed: true,
      },
    ]);
    // Steps carry the YAML lines they were read from, as Rasa's reader adds them.
    const greet = json[0]?.steps as JsonObject[];
    expect(greet[0]?.metadata).toEqual({ line_numbers: '7-7' });
    // Built-in patterns have no file and keep their names.
    const completed = json.find((f) => f.id === 'pattern_completed');
    expect(completed).toMatchObject({ name: 'pattern completed', run_pattern_completed: true });
    expect(completed).not.toHaveProperty('file_path');
  });
});
