import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { slotSet } from 'src/core/events/slot-set';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { FlowsList } from './flows-list';
import { availableFlows, nluCommands, setSlotsPayloadCommands } from './nlu-command-adapter';
import { DialogueStack } from './stack';
import { stackEvent } from './stack-events';
import { flow, step } from './testing-flows';

const trigger = (intent: string, confidenceThreshold = 0) => [{ intent, confidenceThreshold }];

const TRANSFER = flow(
  'transfer_money',
  [
    step.collect('collect_recipient', 'recipient'),
    step.collect('collect_amount', 'amount'),
    step.collect('confirm', 'confirm_transfer'),
  ],
  { nluTrigger: trigger('transfer_money', 0.6) },
);
const GREET = flow('greet_user', [step.action('hi', 'utter_greet')], {
  nluTrigger: trigger('greet'),
});
const VIP = flow('vip_offer', [step.action('offer', 'utter_offer')], {
  nluTrigger: trigger('offer'),
  guard: 'slots.vip = true',
});
const NOTE = flow('take_note', [step.collect('n', 'note')], { nluTrigger: trigger('note') });
const CANCEL = flow('pattern_cancel_flow', [step.action('c', 'action_cancel_flow')], {
  nluTrigger: trigger('stop'),
});
const FALLBACK = flow('pattern_cannot_handle', [step.action('c', 'utter_ask_rephrase')], {
  nluTrigger: trigger('nlu_fallback'),
});
const FLOWS = new FlowsList([TRANSFER, GREET, VIP, NOTE, CANCEL, FALLBACK]);

const DOMAIN = Domain.fromObject({
  intents: [
    'transfer_money',
    'greet',
    'offer',
    'note',
    'stop',
    'nlu_fallback',
    'affirm',
    'deny',
    'inform',
    'chitchat',
  ],
  entities: ['recipient', 'amount'],
  slots: {
    recipient: {
      type: 'text',
      mappings: [
        { type: 'from_entity', entity: 'recipient' },
        {
          type: 'from_text',
          intent: 'inform',
          conditions: [{ active_flow: 'transfer_money' }],
        },
      ],
    },
    amount: { type: 'float', mappings: [{ type: 'from_entity', entity: 'amount' }] },
    confirm_transfer: {
      type: 'bool',
      mappings: [
        {
          type: 'from_intent',
          intent: 'affirm',
          value: true,
          conditions: [{ active_flow: 'transfer_money' }],
        },
        {
          type: 'from_intent',
          intent: 'deny',
          value: false,
          conditions: [{ active_flow: 'transfer_money' }],
        },
      ],
    },
    note: {
      type: 'text',
      mappings: [
        { type: 'from_text', not_intent: ['chitchat'], conditions: [{ active_flow: 'take_note' }] },
      ],
    },
    vip: { type: 'bool', mappings: [{ type: 'custom' }] },
  },
});

const T = 1;

function userFrame(frameId: string, flowId: string, stepId: string): JsonObject {
  return {
    frame_id: frameId,
    flow_id: flowId,
    step_id: stepId,
    frame_type: 'regular',
    type: 'flow',
  };
}

function trackerWithStack(frames: JsonObject[], extra: DialogueEvent[] = []): DialogueStateTracker {
  const event = stackEvent(new DialogueStack(frames), [], T);
  return DialogueStateTracker.fromEvents('c', [...extra, ...(event ? [event] : [])], DOMAIN);
}

const EMPTY = trackerWithStack([]);
function collectFrame(frameId: string, slot: string): JsonObject {
  return {
    frame_id: frameId,
    flow_id: 'pattern_collect_information',
    step_id: 'start',
    collect: slot,
    utter: `utter_ask_${slot}`,
    collect_action: `action_ask_${slot}`,
    rejections: [],
    type: 'pattern_collect_information',
  };
}

const IN_TRANSFER = trackerWithStack([
  userFrame('U1', 'transfer_money', 'confirm'),
  collectFrame('C1', 'confirm_transfer'),
]);
const IN_NOTE = trackerWithStack([userFrame('N1', 'take_note', 'n'), collectFrame('C2', 'note')]);

function commands(
  parseData: JsonObject,
  tracker = EMPTY,
  extra: { maxCharacters?: number; flows?: FlowsList } = {},
) {
  return nluCommands({
    parseData,
    tracker,
    flows: extra.flows ?? FLOWS,
    domain: DOMAIN,
    maxCharacters: extra.maxCharacters,
  });
}

const msg = (
  text: string,
  intent: string | null,
  confidence = 0.9,
  entities: JsonObject[] = [],
) => ({
  text,
  intent: intent === null ? {} : { name: intent, confidence },
  entities,
});

describe('nluCommands: triggers', () => {
  it('starts the flow an intent triggers, at or above its confidence threshold', () => {
    expect(commands(msg('send money', 'transfer_money', 0.6))).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
    ]);
    expect(commands(msg('send money', 'transfer_money', 0.59))).toEqual([]);
    expect(commands(msg('hello', 'greet', 0.01))).toEqual([
      { command: 'start flow', flow: 'greet_user' },
    ]);
  });

  it('issues the command of a pattern trigger', () => {
    expect(commands(msg('stop', 'stop'), IN_TRANSFER)).toEqual([{ command: 'cancel flow' }]);
    expect(commands(msg('???', 'nlu_fallback'))).toEqual([
      { command: 'cannot handle', reason: 'cannot_handle_default' },
    ]);
  });

  it('keeps only the first of several triggered flows', () => {
    const twice = new FlowsList([
      GREET,
      flow('greet_again', [step.action('a', 'utter_hi')], { nluTrigger: trigger('greet') }),
    ]);
    expect(commands(msg('hi', 'greet'), EMPTY, { flows: twice })).toEqual([
      { command: 'start flow', flow: 'greet_user' },
    ]);
  });

  it('starts only flows whose guard holds (or that are active)', () => {
    expect(commands(msg('offer?', 'offer'))).toEqual([]);
    const vip = trackerWithStack([], [slotSet({ timestamp: T, name: 'vip', value: true })]);
    expect(commands(msg('offer?', 'offer'), vip)).toEqual([
      { command: 'start flow', flow: 'vip_offer' },
    ]);
    const active = trackerWithStack([userFrame('V', 'vip_offer', 'offer')]);
    expect(availableFlows(active, FLOWS).map((f) => f.id)).toContain('vip_offer');
    expect(availableFlows(EMPTY, FLOWS).map((f) => f.id)).not.toContain('vip_offer');
  });

  it('drops a start of the active flow (the clean-up runs on the output)', () => {
    expect(commands(msg('send money', 'transfer_money'), IN_TRANSFER)).toEqual([]);
  });
});

describe('nluCommands: slot mappings', () => {
  it('sets slots from entities alongside the started flow', () => {
    const parse = msg('send Joe 50 dollars', 'transfer_money', 0.95, [
      { entity: 'recipient', value: 'Joe' },
      { entity: 'amount', value: '50' },
    ]);
    expect(commands(parse)).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'recipient', value: 'Joe', extractor: 'NLU' },
      { command: 'set slot', name: 'amount', value: '50', extractor: 'NLU' },
    ]);
  });

  it('fills from_intent mappings only while their active_flow condition holds', () => {
    expect(commands(msg('yes', 'affirm'), IN_TRANSFER)).toEqual([
      { command: 'set slot', name: 'confirm_transfer', value: true, extractor: 'NLU' },
    ]);
    expect(commands(msg('no', 'deny'), IN_TRANSFER)).toEqual([
      { command: 'set slot', name: 'confirm_transfer', value: false, extractor: 'NLU' },
    ]);
    expect(commands(msg('yes', 'affirm'))).toEqual([]);
  });

  it('honours intent and not_intent filters of from_text mappings', () => {
    // `recipient` takes the text on `inform` inside the transfer flow; `note` any text but
    // chitchat inside the note flow.
    expect(commands(msg('Maria', 'inform'), IN_TRANSFER)).toEqual([
      { command: 'set slot', name: 'recipient', value: 'Maria', extractor: 'NLU' },
    ]);
    expect(commands(msg('Maria', 'greet'), IN_TRANSFER)).toEqual([
      { command: 'start flow', flow: 'greet_user' },
    ]);
    expect(commands(msg('buy milk', 'inform'), IN_NOTE)).toEqual([
      { command: 'set slot', name: 'note', value: 'buy milk', extractor: 'NLU' },
    ]);
    expect(commands(msg('how are you', 'chitchat'), IN_NOTE)).toEqual([]);
  });

  it('ignores slots no available flow collects and entities the domain does not declare', () => {
    const noNote = new FlowsList([TRANSFER]);
    expect(commands(msg('buy milk', 'inform'), IN_NOTE, { flows: noNote })).toEqual([]);
    expect(
      commands(msg('x', null, 1, [{ entity: 'city', value: 'Rome' }]), EMPTY, { flows: noNote }),
    ).toEqual([]);
  });
});

describe('nluCommands: input checks and payloads', () => {
  it('reports an empty or too long message as an error command', () => {
    expect(commands(msg('   ', 'greet'))).toEqual([
      { command: 'error', error_type: 'rasa_internal_error_user_input_empty', info: {} },
    ]);
    expect(commands(msg('x'.repeat(421), 'greet'))).toEqual([
      {
        command: 'error',
        error_type: 'rasa_internal_error_user_input_too_long',
        info: { max_characters: 420 },
      },
    ]);
    expect(commands(msg('x'.repeat(420), 'greet'))).toEqual([
      { command: 'start flow', flow: 'greet_user' },
    ]);
    expect(commands(msg('hello', 'greet'), EMPTY, { maxCharacters: 3 })[0]).toMatchObject({
      info: { max_characters: 3 },
    });
    expect(commands(msg('x'.repeat(5000), 'greet'), EMPTY, { maxCharacters: -1 })).toHaveLength(1);
  });

  it('keeps commands the message already carries', () => {
    const parse = { ...msg('hi', 'greet'), commands: [{ command: 'cancel flow' }] };
    expect(commands(parse)).toEqual([{ command: 'cancel flow' }]);
  });

  it('reads /SetSlots payloads as set slot commands of the payload reader', () => {
    expect(
      commands({ text: '/SetSlots(recipient=Anna, amount = 20, note=null)', intent: {} }),
    ).toEqual([
      { command: 'set slot', name: 'recipient', value: 'Anna', extractor: 'CommandPayloadReader' },
      { command: 'set slot', name: 'amount', value: '20', extractor: 'CommandPayloadReader' },
      { command: 'set slot', name: 'note', value: null, extractor: 'CommandPayloadReader' },
    ]);
    expect(setSlotsPayloadCommands('/SetSlots(recipient=Anna, city=Rome)', DOMAIN)).toEqual([]);
    expect(setSlotsPayloadCommands('hello', DOMAIN)).toBeNull();
    const many = Array.from({ length: 11 }, (_, i) => `s${i}=v`).join(',');
    expect(setSlotsPayloadCommands(`/SetSlots(${many})`, DOMAIN)).toEqual([]);
  });
});
