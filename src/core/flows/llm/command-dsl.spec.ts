import { type Flow } from 'src/core/flows/flow';
import { FlowsList } from 'src/core/flows/flows-list';
import { cleanValue, nullableValue, parseCommandDsl } from 'src/core/flows/llm/command-dsl';

function flow(id: string): Flow {
  return {
    id,
    name: id.replace(/_/g, ' '),
    description: `${id} description`,
    guard: null,
    nluTrigger: [],
    alwaysIncludeInPrompt: null,
    persistedSlots: [],
    runPatternCompleted: true,
    steps: [],
    filePath: null,
    builtIn: false,
  };
}

const flows = new FlowsList([
  flow('transfer_money'),
  flow('check_balance'),
  flow('add-contact'),
  flow('pattern_chitchat'),
]);

describe('parseCommandDsl v1', () => {
  const parse = (text: string) => parseCommandDsl(text, flows, 'v1');

  it('parses every action', () => {
    expect(
      parse(
        [
          'StartFlow(transfer_money)',
          'SetSlot(amount, 50)',
          'CancelFlow()',
          'ChitChat()',
          'SkipQuestion()',
          'SearchAndReply()',
          'HumanHandoff()',
          'RepeatLastBotMessages()',
          'CannotHandle()',
        ].join('\n'),
      ),
    ).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'amount', value: '50', extractor: 'LLM' },
      { command: 'cancel flow' },
      { command: 'chitchat' },
      { command: 'skip question' },
      { command: 'knowledge' },
      { command: 'human handoff' },
      { command: 'repeat' },
      { command: 'cannot handle', reason: 'cannot_handle_default' },
    ]);
  });

  it('strips quotes and spaces from values; placeholders become null', () => {
    expect(parse('SetSlot(recipient, "Jo Doe")')).toEqual([
      { command: 'set slot', name: 'recipient', value: 'Jo Doe', extractor: 'LLM' },
    ]);
    for (const placeholder of ['[missing information]', '[missing]', 'None', 'undefined', 'null']) {
      expect(parse(`SetSlot(amount, ${placeholder})`)).toEqual([
        { command: 'set slot', name: 'amount', value: null, extractor: 'LLM' },
      ]);
    }
  });

  it('reads quoted flow ids and ids with dashes', () => {
    expect(parse("StartFlow('add-contact')")).toEqual([
      { command: 'start flow', flow: 'add-contact' },
    ]);
  });

  it('drops start flow of unknown flows and of patterns', () => {
    expect(parse('StartFlow(order_pizza)\nStartFlow(pattern_chitchat)')).toEqual([]);
  });

  it('treats SetSlot(flow_name, x) as StartFlow(x)', () => {
    expect(parse('SetSlot(flow_name, check_balance)')).toEqual([
      { command: 'start flow', flow: 'check_balance' },
    ]);
    expect(parse('SetSlot(flow_name, nonsense)')).toEqual([]);
  });

  it('clarify: filters options to user flows, sorts them; one left starts it; none drops it', () => {
    expect(parse('Clarify(transfer_money, check_balance)')).toEqual([
      { command: 'clarify', options: ['check_balance', 'transfer_money'] },
    ]);
    expect(parse('Clarify(transfer_money, nonsense)')).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
    ]);
    expect(parse('Clarify(nonsense, pattern_chitchat)')).toEqual([]);
    expect(parse('Clarify()')).toEqual([]);
  });

  it('finds actions anywhere in a line, one line may give several commands', () => {
    expect(parse('1. StartFlow(transfer_money) then SetSlot(amount, 5)')).toEqual([
      { command: 'set slot', name: 'amount', value: '5', extractor: 'LLM' },
      { command: 'start flow', flow: 'transfer_money' },
    ]);
  });

  it('nothing parseable gives no commands', () => {
    expect(parse('I would like to help you')).toEqual([]);
    expect(parse('')).toEqual([]);
    expect(parseCommandDsl(null, flows, 'v1')).toEqual([]);
  });
});

describe('parseCommandDsl v2', () => {
  const parse = (text: string) => parseCommandDsl(text, flows, 'v2');

  it('parses every action, with bullets and numbers in front', () => {
    expect(
      parse(
        [
          '- start flow transfer_money',
          '* set slot amount 50',
          '1. cancel flow',
          'offtopic reply',
          'skip question',
          'provide info',
          'hand over',
          'repeat message',
          'cannot handle',
          'disambiguate flows transfer_money check_balance',
        ].join('\n'),
      ),
    ).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'amount', value: '50', extractor: 'LLM' },
      { command: 'cancel flow' },
      { command: 'chitchat' },
      { command: 'skip question' },
      { command: 'knowledge' },
      { command: 'human handoff' },
      { command: 'repeat' },
      { command: 'cannot handle', reason: 'cannot_handle_default' },
      { command: 'clarify', options: ['check_balance', 'transfer_money'] },
    ]);
  });

  it('set slot values keep inner spaces; quotes and placeholders are handled', () => {
    expect(parse("set slot recipient 'Jo Doe'")).toEqual([
      { command: 'set slot', name: 'recipient', value: 'Jo Doe', extractor: 'LLM' },
    ]);
    expect(parse('set slot amount [missing information]')).toEqual([
      { command: 'set slot', name: 'amount', value: null, extractor: 'LLM' },
    ]);
    expect(parse('set slot flow_name check_balance')).toEqual([
      { command: 'start flow', flow: 'check_balance' },
    ]);
  });

  it('anchors the action at the start of the line', () => {
    expect(parse('I think we should cancel flow')).toEqual([]);
    expect(parse('cancel flow now')).toEqual([]);
    expect(parse('start flow transfer_money please')).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
    ]);
  });

  it('does not read v1 syntax', () => {
    expect(parse('StartFlow(transfer_money)')).toEqual([]);
  });
});

describe('value helpers', () => {
  it('cleanValue strips quotes and spaces at both ends only', () => {
    expect(cleanValue(` "it's" `)).toBe("it's");
    expect(cleanValue("'a b'")).toBe('a b');
  });

  it('nullableValue', () => {
    expect(nullableValue('')).toBeNull();
    expect(nullableValue('None')).toBeNull();
    expect(nullableValue('none')).toBe('none');
  });
});
