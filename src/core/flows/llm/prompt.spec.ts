import { bankFlows, bankTracker } from 'src/core/flows/llm/llm-fixtures';
import {
  buildPromptInputs,
  DEFAULT_PROMPT_TEMPLATE_V1,
  DEFAULT_PROMPT_TEMPLATE_V2,
  readableTranscript,
  renderPrompt,
} from 'src/core/flows/llm/prompt';
import { DialogueStack } from 'src/core/flows/stack';

const flows = bankFlows();
const inTransfer = () =>
  new DialogueStack([
    {
      frame_id: 'F1',
      flow_id: 'transfer_money',
      step_id: 'transfer_money_collect_amount',
      frame_type: 'regular',
      type: 'flow',
    },
    {
      frame_id: 'F2',
      flow_id: 'pattern_collect_information',
      step_id: 'start',
      type: 'pattern_collect_information',
      collect: 'amount',
    },
  ]);

describe('readableTranscript', () => {
  it('writes USER:/AI: lines, newlines flattened, the last 20 kept', () => {
    const tracker = bankTracker([
      ['user', 'hi\nthere'],
      ['bot', 'Hello!'],
    ]);
    expect(readableTranscript(tracker)).toBe('USER: hi there\nAI: Hello!');
    const long = bankTracker(
      Array.from({ length: 25 }, (_, i) => ['user', `m${i}`] as ['user', string]),
    );
    const lines = readableTranscript(long).split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('USER: m5');
  });
});

describe('buildPromptInputs', () => {
  it('outside any flow: flows with their fillable slots, no current flow', () => {
    const inputs = buildPromptInputs({
      text: 'send 50 to Jo',
      tracker: bankTracker([['bot', 'How can I help?']]),
      flows,
      flowsInPrompt: flows.userFlows,
      stack: new DialogueStack(),
    });
    expect(inputs.available_flows).toEqual([
      {
        name: 'transfer_money',
        description: 'Send money to a friend or family member.',
        slots: [
          { name: 'recipient', description: 'who receives the money', allowed_values: null },
          { name: 'amount', description: 'how much to send', allowed_values: null },
        ],
      },
      {
        name: 'check_balance',
        description: 'Show the balance of a bank account.',
        slots: [
          { name: 'account_type', description: null, allowed_values: ['checking', 'savings'] },
        ],
      },
      {
        name: 'replace_card',
        description: 'Order a replacement for a lost or damaged card.',
        slots: [],
      },
    ]);
    expect(inputs.current_conversation).toBe('AI: How can I help?\nUSER: send 50 to Jo');
    expect(inputs.user_message).toBe('send 50 to Jo');
    expect(inputs.current_flow).toBeNull();
    expect(inputs.current_slot).toBeNull();
    expect(inputs.flow_slots).toEqual([]);
    expect(inputs.is_repeat_command_enabled).toBe(false);
  });

  it('inside a collect step: current flow and slot, the flow slots with values', () => {
    const inputs = buildPromptInputs({
      text: '50',
      tracker: bankTracker([], { recipient: 'Jo', confirm: true }),
      flows,
      flowsInPrompt: flows.userFlows,
      stack: inTransfer(),
    });
    expect(inputs.current_flow).toBe('transfer_money');
    expect(inputs.current_slot).toBe('amount');
    expect(inputs.current_slot_description).toBe('how much to send');
    expect(inputs.current_slot_type).toBe('float');
    expect(inputs.flow_slots).toEqual([
      {
        name: 'recipient',
        value: 'Jo',
        type: 'text',
        allowed_values: null,
        description: 'who receives the money',
      },
      {
        name: 'amount',
        value: 'undefined',
        type: 'float',
        allowed_values: null,
        description: 'how much to send',
      },
      // ask_before_filling, but already set: listed.
      {
        name: 'confirm',
        value: true,
        type: 'bool',
        allowed_values: [true, false],
        description: null,
      },
    ]);
  });
});

describe('default prompt templates', () => {
  it('v1 lists the flows, slots, conversation and v1 actions', () => {
    const prompt = renderPrompt(
      DEFAULT_PROMPT_TEMPLATE_V1,
      buildPromptInputs({
        text: 'send money',
        tracker: bankTracker([
          ['user', 'hello'],
          ['bot', 'Hi!'],
        ]),
        flows,
        flowsInPrompt: flows.userFlows,
        stack: new DialogueStack(),
      }),
    );
    expect(prompt).toContain('transfer_money: Send money to a friend or family member.');
    expect(prompt).toContain('    slot: recipient (who receives the money)');
    expect(prompt).toContain("slot: account_type, allowed values: ['checking', 'savings']");
    expect(prompt).toContain('USER: hello\nAI: Hi!\nUSER: send money');
    expect(prompt).toContain('No flow is active');
    expect(prompt).toContain('StartFlow(flow_name)');
    expect(prompt).not.toContain('RepeatLastBotMessages');
    expect(prompt).not.toContain('{{');
  });

  it('v2 shows the active flow and its slots', () => {
    const prompt = renderPrompt(
      DEFAULT_PROMPT_TEMPLATE_V2,
      buildPromptInputs({
        text: '50',
        tracker: bankTracker([], { recipient: 'Jo' }),
        flows,
        flowsInPrompt: flows.userFlows,
        stack: inTransfer(),
      }),
    );
    expect(prompt).toContain('Active flow: transfer_money');
    expect(prompt).toContain('Requested slot: amount (float): how much to send');
    expect(prompt).toContain('- recipient = Jo (text)');
    expect(prompt).toContain('`start flow flow_name`');
    expect(prompt).toContain('## Your actions for """50""":');
  });

  it('renders a Rasa-style user template (loops with loop.last, != None, |length)', () => {
    const template = [
      '{% for flow in available_flows %}{{ flow.name }}{% if not loop.last %},{% endif %}{% endfor %}',
      '{% if current_flow != None %}in {{ current_flow }}{% else %}no flow{% endif %}',
      '{% if flow_slots|length > 0 %}{% for slot in flow_slots -%}',
      '- {{ slot.name }}: {{ slot.value }}',
      '{% endfor %}{% endif %}',
    ].join('\n');
    const prompt = renderPrompt(
      template,
      buildPromptInputs({
        text: 'x',
        tracker: bankTracker(),
        flows,
        flowsInPrompt: flows.userFlows.slice(0, 2),
        stack: inTransfer(),
      }),
    );
    expect(prompt).toBe(
      'transfer_money,check_balance\nin transfer_money\n- recipient: undefined\n- amount: undefined\n',
    );
  });
});
