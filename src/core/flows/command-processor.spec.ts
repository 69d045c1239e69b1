import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { serializeEvent } from 'src/core/events/event-codec';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import {
  CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR,
  checkCommandInvariants,
  cleanUpCommands,
  coerceSlotValue,
  commandsFromParseData,
  flowFingerprint,
  flowFingerprints,
  processCommands,
} from './command-processor';
import { type Command } from './commands';
import { FlowsList } from './flows-list';
import { nluCommands } from './nlu-command-adapter';
import { DialogueStack } from './stack';
import { previousStackStates, stackEvent, stackOf } from './stack-events';
import { flow, step } from './testing-flows';

// --- tiny builders -----------------------------------------------------------------------------

const TRANSFER = flow(
  'transfer_money',
  [
    step.collect('collect_recipient', 'recipient'),
    step.collect('collect_amount', 'amount'),
    step.collect('confirm', 'confirm_transfer', { askBeforeFilling: true }),
    step.action('done', 'utter_transfer_done'),
  ],
  { nluTrigger: [{ intent: 'transfer_money', confidenceThreshold: 0.6 }] },
);
const BALANCE = flow('check_balance', [step.action('show', 'utter_balance')], {
  nluTrigger: [{ intent: 'check_balance', confidenceThreshold: 0 }],
});
const COLLECT_PATTERN = flow('pattern_collect_information', [
  step.action('start', 'action_run_slot_rejections'),
]);
const CHITCHAT_PATTERN = flow(
  'pattern_chitchat',
  [step.action('chat', 'action_trigger_chitchat')],
  {
    builtIn: true,
  },
);
const CANCEL_PATTERN = flow('pattern_cancel_flow', [step.action('cancel', 'action_cancel_flow')], {
  nluTrigger: [{ intent: 'stop', confidenceThreshold: 0 }],
});
const CORRECTION_PATTERN = flow('pattern_correction', [
  step.action('correct', 'action_correct_flow_slot'),
]);
const FLOWS = new FlowsList([
  TRANSFER,
  BALANCE,
  COLLECT_PATTERN,
  CHITCHAT_PATTERN,
  CANCEL_PATTERN,
  CORRECTION_PATTERN,
]);

const DOMAIN = Domain.fromObject({
  intents: ['transfer_money', 'check_balance', 'affirm', 'deny', 'stop', 'inform'],
  entities: ['recipient', 'amount'],
  slots: {
    recipient: { type: 'text', mappings: [{ type: 'from_entity', entity: 'recipient' }] },
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
    note: { type: 'text' },
    priority: { type: 'categorical', values: ['low', 'high'], mappings: [{ type: 'from_llm' }] },
    flow_hashes: { type: 'any', influence_conversation: false, mappings: [{ type: 'custom' }] },
  },
});

let nextId = 0;
const frameIds = (): (() => string) => {
  nextId = 0;
  return () => `F${++nextId}`;
};

const T = 100;

function userFrame(
  frameId: string,
  flowId: string,
  stepId: string,
  frameType = 'regular',
): JsonObject {
  return {
    frame_id: frameId,
    flow_id: flowId,
    step_id: stepId,
    frame_type: frameType,
    type: 'flow',
  };
}

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

/** Stack events that walk through the given stack states in order. */
function stackHistory(states: JsonObject[][], from: JsonObject[] = []): DialogueEvent[] {
  const events: DialogueEvent[] = [];
  let before = from;
  for (const state of states) {
    const e = stackEvent(new DialogueStack(state), before, T);
    if (e !== null) events.push(e);
    before = state;
  }
  return events;
}

function hashes(flows: FlowsList = FLOWS): DialogueEvent {
  return slotSet({ timestamp: T, name: 'flow_hashes', value: flowFingerprints(flows) });
}

function trackerWith(
  history: DialogueEvent[],
  commands: unknown[],
  metadata?: JsonObject,
): DialogueStateTracker {
  const user = userUttered({
    timestamp: T,
    text: 'hi',
    metadata: metadata ?? null,
    parseData: { commands },
  });
  return DialogueStateTracker.fromEvents('c1', [...history, user], DOMAIN);
}

function run(tracker: DialogueStateTracker, flows: FlowsList = FLOWS): DialogueEvent[] {
  return processCommands({ tracker, flows, domain: DOMAIN, now: () => T, newFrameId: frameIds() });
}

/** The events as JSON without timestamps, stack updates parsed. */
function wire(events: DialogueEvent[]): JsonObject[] {
  return events.map((e) => {
    const d = serializeEvent(e) as JsonObject;
    delete d.timestamp;
    if (d.metadata !== undefined && Object.keys(d.metadata as JsonObject).length === 0) {
      delete d.metadata;
    }
    if (typeof d.update === 'string') d.update = JSON.parse(d.update);
    return d;
  });
}

function stackAfter(tracker: DialogueStateTracker, events: DialogueEvent[]): unknown[] {
  const copy = tracker.copy();
  for (const e of events) copy.update(e);
  return copy.stack as unknown[];
}

/** The transfer flow asking for the amount, the recipient already collected. */
const ASKING_AMOUNT = stackHistory([
  [userFrame('U1', 'transfer_money', 'START')],
  [userFrame('U1', 'transfer_money', 'collect_recipient')],
  [userFrame('U1', 'transfer_money', 'collect_recipient'), collectFrame('C1', 'recipient')],
  [userFrame('U1', 'transfer_money', 'collect_amount')],
  [userFrame('U1', 'transfer_money', 'collect_amount'), collectFrame('C2', 'amount')],
]);

// --- stack events --------------------------------------------------------------------------------

describe('stack events', () => {
  it('is null when the stack did not change, else a stack event with the JSON patch as a string', () => {
    const frames = [userFrame('A', 'f', 'START')];
    expect(stackEvent(new DialogueStack(frames), frames, T)).toBeNull();
    const stack = new DialogueStack(frames);
    stack.update(0, { step_id: 's1' });
    const event = stackEvent(stack, frames, T);
    expect(event?.type).toBe('stack');
    expect(JSON.parse(event?.update ?? '')).toEqual([
      { op: 'replace', path: '/0/step_id', value: 's1' },
    ]);
  });

  it('reads the stack of a tracker and its previous states', () => {
    const tracker = DialogueStateTracker.fromEvents('c', ASKING_AMOUNT, DOMAIN);
    expect(stackOf(tracker).toJSON()).toEqual([
      userFrame('U1', 'transfer_money', 'collect_amount'),
      collectFrame('C2', 'amount'),
    ]);
    const states = previousStackStates(tracker);
    expect(states).toHaveLength(5);
    expect(states[1]).toEqual([userFrame('U1', 'transfer_money', 'collect_recipient')]);
  });

  it('falls back to the legacy dialogue_stack slot', () => {
    const domain = Domain.fromObject({
      slots: { dialogue_stack: { type: 'any', influence_conversation: false } },
    });
    const frames = [userFrame('L', 'f', 'x')];
    const tracker = DialogueStateTracker.fromEvents(
      'c',
      [slotSet({ timestamp: T, name: 'dialogue_stack', value: frames })],
      domain,
    );
    expect(stackOf(tracker).toJSON()).toEqual(frames);
  });
});

// --- reading commands ----------------------------------------------------------------------------

describe('commandsFromParseData', () => {
  it('reads every known command and drops unknown or malformed entries', () => {
    const commands = commandsFromParseData({
      commands: [
        { command: 'start flow', flow: 'a' },
        { command: 'start flow' },
        { command: 'set slot', name: 'x', value: 1 },
        { command: 'set slot', name: 'x' },
        { command: 'set slot', name: 'x', value: 1, extractor: 'Other' },
        { command: 'cannot handle' },
        { command: 'error' },
        { command: 'clarify', options: ['a', 2] },
        { command: 'correct slot', corrected_slots: [{ name: 'x', value: 'v' }] },
        { command: 'teleport' },
        'cancel flow',
        { command: 'cancel flow' },
      ],
    });
    expect(commands).toEqual([
      { command: 'start flow', flow: 'a' },
      { command: 'set slot', name: 'x', value: 1, extractor: 'LLM' },
      { command: 'cannot handle', reason: 'cannot_handle_default' },
      { command: 'error', error_type: 'rasa_internal_error_default', info: {} },
      { command: 'correct slot', corrected_slots: [{ name: 'x', value: 'v', filled_by: null }] },
      { command: 'cancel flow' },
    ]);
    expect(commandsFromParseData({ commands: 'nope' })).toEqual([]);
    expect(commandsFromParseData(null)).toEqual([]);
  });
});

// --- the worked trace ----------------------------------------------------------------------------

describe('processCommands: "send Joe 50 dollars"', () => {
  it('starts the flow and sets both slots after the flow hashes', () => {
    const parseData = {
      text: 'send Joe 50 dollars',
      intent: { name: 'transfer_money', confidence: 0.95 },
      entities: [
        { entity: 'recipient', value: 'Joe', start: 5, end: 8 },
        { entity: 'amount', value: '50', start: 9, end: 11 },
      ],
    };
    const empty = DialogueStateTracker.fromEvents('c1', [], DOMAIN);
    const commands = nluCommands({ parseData, tracker: empty, flows: FLOWS, domain: DOMAIN });
    expect(commands).toEqual([
      { command: 'start flow', flow: 'transfer_money' },
      { command: 'set slot', name: 'recipient', value: 'Joe', extractor: 'NLU' },
      { command: 'set slot', name: 'amount', value: '50', extractor: 'NLU' },
    ]);
    const tracker = trackerWith([], commands);
    const events = run(tracker);
    expect(wire(events)).toEqual([
      { event: 'slot', name: 'flow_hashes', value: flowFingerprints(FLOWS) },
      { event: 'slot', name: 'amount', value: 50 },
      { event: 'slot', name: 'recipient', value: 'Joe' },
      {
        event: 'stack',
        update: [{ op: 'add', path: '/0', value: userFrame('F1', 'transfer_money', 'START') }],
      },
    ]);
    expect(stackAfter(tracker, events)).toEqual([userFrame('F1', 'transfer_money', 'START')]);
  });

  it('writes no flow_hashes event when the stored fingerprints are current', () => {
    const events = run(trackerWith([hashes()], [{ command: 'start flow', flow: 'check_balance' }]));
    expect(wire(events).map((e) => e.event)).toEqual(['stack']);
  });
});

// --- cancel, interrupt ---------------------------------------------------------------------------

describe('processCommands: flows on the stack', () => {
  it('cancels the active flow: flow_cancelled, then the cancel pattern over the cancelled frames', () => {
    const tracker = trackerWith([hashes(), ...ASKING_AMOUNT], [{ command: 'cancel flow' }]);
    const events = run(tracker);
    expect(wire(events)).toEqual([
      { event: 'flow_cancelled', flow_id: 'transfer_money', step_id: 'collect_amount' },
      {
        event: 'stack',
        update: [
          {
            op: 'add',
            path: '/2',
            value: {
              frame_id: 'F1',
              flow_id: 'pattern_cancel_flow',
              step_id: 'START',
              canceled_name: 'transfer money',
              canceled_frames: ['C2', 'U1'],
              type: 'pattern_cancel_flow',
            },
          },
        ],
      },
    ]);
  });

  it('does nothing for a cancel without an active flow, and drops a second cancel', () => {
    expect(run(trackerWith([hashes()], [{ command: 'cancel flow' }]))).toEqual([]);
    const events = run(
      trackerWith(
        [hashes(), ...ASKING_AMOUNT],
        [{ command: 'cancel flow' }, { command: 'cancel flow' }],
      ),
    );
    expect(wire(events).map((e) => e.event)).toEqual(['flow_cancelled', 'stack']);
  });

  it('interrupts the active flow when another one starts', () => {
    const tracker = trackerWith(
      [hashes(), ...ASKING_AMOUNT],
      [{ command: 'start flow', flow: 'check_balance' }],
    );
    const events = run(tracker);
    expect(wire(events)).toEqual([
      { event: 'flow_interrupted', flow_id: 'transfer_money', step_id: 'collect_amount' },
      {
        event: 'stack',
        update: [
          { op: 'add', path: '/2', value: userFrame('F1', 'check_balance', 'START', 'interrupt') },
        ],
      },
    ]);
  });

  it('drops a start of the active flow and skips a flow already on the stack or unknown', () => {
    const tracker = trackerWith(
      [hashes(), ...ASKING_AMOUNT],
      [
        { command: 'start flow', flow: 'transfer_money' },
        { command: 'start flow', flow: 'nope' },
      ],
    );
    expect(run(tracker)).toEqual([]);
  });

  it('puts the first of several started flows on top', () => {
    const events = run(
      trackerWith(
        [hashes()],
        [
          { command: 'start flow', flow: 'check_balance' },
          { command: 'start flow', flow: 'transfer_money' },
        ],
      ),
    );
    const tracker = trackerWith([hashes()], []);
    expect(stackAfter(tracker, events)).toEqual([
      userFrame('F1', 'transfer_money', 'START'),
      userFrame('F2', 'check_balance', 'START'),
    ]);
  });
});

// --- corrections ---------------------------------------------------------------------------------

describe('processCommands: corrections', () => {
  const history = [
    hashes(),
    slotSet({ timestamp: T, name: 'recipient', value: 'Joe' }),
    ...ASKING_AMOUNT,
  ];

  it('turns a set slot of an earlier collected slot into a correction frame', () => {
    const setRecipient = {
      command: 'set slot',
      name: 'recipient',
      value: 'Anna',
      extractor: 'NLU',
    };
    const tracker = trackerWith(history, [setRecipient]);
    expect(
      cleanUpCommands(commandsFromParseData({ commands: [setRecipient] }), {
        tracker,
        flows: FLOWS,
        domain: DOMAIN,
      }),
    ).toEqual([
      { command: 'correct slot', corrected_slots: [{ name: 'recipient', value: 'Anna' }] },
    ]);
    expect(wire(run(tracker))).toEqual([
      {
        event: 'stack',
        update: [
          {
            op: 'add',
            path: '/2',
            value: {
              frame_id: 'F1',
              flow_id: 'pattern_correction',
              step_id: 'START',
              is_reset_only: false,
              corrected_slots: { recipient: 'Anna' },
              reset_flow_id: 'transfer_money',
              reset_step_id: 'collect_recipient',
              type: 'pattern_correction',
            },
          },
        ],
      },
    ]);
  });

  it('drops a set slot repeating the filled value, and sets the slot being asked', () => {
    expect(
      run(
        trackerWith(history, [
          { command: 'set slot', name: 'recipient', value: 'Joe', extractor: 'NLU' },
        ]),
      ),
    ).toEqual([]);
    const events = run(
      trackerWith(history, [
        { command: 'set slot', name: 'amount', value: '12.5', extractor: 'NLU' },
      ]),
    );
    expect(wire(events)).toEqual([{ event: 'slot', name: 'amount', value: 12.5 }]);
  });

  it('inserts a new correction below a running one and ends the old one', () => {
    const asking = [
      userFrame('U1', 'transfer_money', 'collect_amount'),
      collectFrame('C2', 'amount'),
    ];
    const correcting = stackHistory(
      [
        [
          userFrame('U1', 'transfer_money', 'collect_amount'),
          collectFrame('C2', 'amount'),
          {
            frame_id: 'K1',
            flow_id: 'pattern_correction',
            step_id: 'x',
            is_reset_only: false,
            corrected_slots: { recipient: 'Anna' },
            reset_flow_id: null,
            reset_step_id: null,
            type: 'pattern_correction',
          },
        ],
      ],
      asking,
    );
    const tracker = trackerWith(
      [...history, ...correcting],
      [
        { command: 'set slot', name: 'recipient', value: 'Anna', extractor: 'NLU' },
        { command: 'set slot', name: 'recipient', value: 'Max', extractor: 'NLU' },
      ],
    );
    const events = run(tracker);
    const stack = stackAfter(tracker, events) as JsonObject[];
    expect(stack.map((f) => [f.frame_id, f.step_id])).toEqual([
      ['U1', 'collect_amount'],
      ['C2', 'start'],
      ['F1', 'START'],
      ['K1', 'NEXT:END'],
    ]);
    expect(stack[2]?.corrected_slots).toEqual({ recipient: 'Max' });
  });

  it('marks a correction of ask-before-filling slots as reset only', () => {
    const asked = stackHistory([
      [userFrame('U1', 'transfer_money', 'confirm')],
      [userFrame('U1', 'transfer_money', 'confirm'), collectFrame('C3', 'confirm_transfer')],
      [userFrame('U1', 'transfer_money', 'done')],
    ]);
    const tracker = trackerWith(
      [hashes(), slotSet({ timestamp: T, name: 'confirm_transfer', value: true }), ...asked],
      [{ command: 'set slot', name: 'confirm_transfer', value: false, extractor: 'NLU' }],
    );
    const [event] = wire(run(tracker));
    const value = ((event?.update as JsonObject[])[0] as JsonObject).value as JsonObject;
    expect(value.is_reset_only).toBe(true);
    expect(value.reset_step_id).toBe('confirm');
  });
});

// --- clean-up rules ------------------------------------------------------------------------------

describe('cleanUpCommands', () => {
  const clean = (commands: Command[], history: DialogueEvent[] = [], flows = FLOWS): Command[] =>
    cleanUpCommands(commands, { tracker: trackerWith(history, []), flows, domain: DOMAIN });

  it('replaces a set slot whose extractor does not fit the mappings by cannot handle', () => {
    const llm: Command = { command: 'set slot', name: 'recipient', value: 'x', extractor: 'LLM' };
    const nlu: Command = { command: 'set slot', name: 'note', value: 'x', extractor: 'NLU' };
    expect(clean([llm, nlu])).toEqual([
      { command: 'cannot handle', reason: CANNOT_HANDLE_INCOMPATIBLE_EXTRACTOR },
    ]);
    const payload: Command = {
      command: 'set slot',
      name: 'recipient',
      value: 'x',
      extractor: 'CommandPayloadReader',
    };
    expect(clean([payload])).toEqual([payload]);
    // With other commands left, the incompatible-extractor cannot handle is dropped.
    expect(clean([llm, { command: 'start flow', flow: 'check_balance' }])).toEqual([
      { command: 'start flow', flow: 'check_balance' },
    ]);
    expect(clean([{ command: 'set slot', name: 'unknown', value: 1, extractor: 'NLU' }])).toEqual(
      [],
    );
  });

  it('keeps one cannot handle and turns chitchat into cannot handle while the pattern triggers the chitchat policy', () => {
    expect(
      clean([
        { command: 'cannot handle', reason: null },
        { command: 'cannot handle', reason: 'x' },
      ]),
    ).toEqual([{ command: 'cannot handle', reason: null }]);
    expect(
      clean([{ command: 'start flow', flow: 'check_balance' }, { command: 'chitchat' }]),
    ).toEqual([
      { command: 'cannot handle', reason: 'cannot_handle_chitchat' },
      { command: 'start flow', flow: 'check_balance' },
    ]);
    const answering = new FlowsList([
      TRANSFER,
      BALANCE,
      flow('pattern_chitchat', [step.action('a', 'utter_chat')]),
    ]);
    expect(
      clean(
        [{ command: 'start flow', flow: 'check_balance' }, { command: 'chitchat' }],
        [],
        answering,
      ),
    ).toEqual([{ command: 'chitchat' }, { command: 'start flow', flow: 'check_balance' }]);
  });

  it('moves knowledge to the front', () => {
    expect(
      clean([{ command: 'start flow', flow: 'check_balance' }, { command: 'knowledge' }]),
    ).toEqual([{ command: 'knowledge' }, { command: 'start flow', flow: 'check_balance' }]);
  });

  it('keeps a clarify alone, the first of several clarifies, and none beside other commands', () => {
    const a: Command = { command: 'clarify', options: ['transfer_money', 'check_balance'] };
    const b: Command = { command: 'clarify', options: ['check_balance'] };
    expect(clean([a])).toEqual([a]);
    expect(clean([a, b])).toEqual([a]);
    expect(clean([a, { command: 'start flow', flow: 'check_balance' }])).toEqual([
      { command: 'start flow', flow: 'check_balance' },
    ]);
  });
});

describe('checkCommandInvariants', () => {
  it('rejects two cancels, two corrections or a free-form answer after other commands', () => {
    expect(() =>
      checkCommandInvariants([{ command: 'cancel flow' }, { command: 'cancel flow' }]),
    ).toThrow('only be one cancel');
    const correct: Command = { command: 'correct slot', corrected_slots: [] };
    expect(() => checkCommandInvariants([correct, correct])).toThrow('one correct slots');
    expect(() =>
      checkCommandInvariants([{ command: 'restart' }, { command: 'knowledge' }]),
    ).toThrow('Free form');
    expect(() =>
      checkCommandInvariants([{ command: 'knowledge' }, { command: 'restart' }]),
    ).not.toThrow();
  });
});

// --- set slot execution ----------------------------------------------------------------------------

describe('processCommands: set slot', () => {
  it('coerces values as Rasa slot types do', () => {
    const slot = (type: string, values?: string[]) => ({
      name: 's',
      type,
      initialValue: null,
      influenceConversation: true,
      mappings: [],
      properties: {},
      ...(values ? { values } : {}),
    });
    expect(coerceSlotValue(slot('bool'), 'yes')).toBe(true);
    expect(coerceSlotValue(slot('bool'), 'False')).toBe(false);
    expect(coerceSlotValue(slot('bool'), 1)).toBe(true);
    expect(coerceSlotValue(slot('bool'), 'maybe')).toBe('maybe');
    expect(coerceSlotValue(slot('float'), ' 3.5 ')).toBe(3.5);
    expect(coerceSlotValue(slot('float'), 'ten')).toBe('ten');
    expect(coerceSlotValue(slot('categorical', ['low', 'High']), 'HIGH')).toBe('High');
    expect(coerceSlotValue(slot('categorical', ['low', 'High']), 'medium')).toBe('medium');
    expect(coerceSlotValue(slot('list'), 'a')).toEqual(['a']);
    expect(coerceSlotValue(slot('text'), 5)).toBe(5);
  });

  it('drops an LLM or payload set slot for a slot no active or starting flow collects', () => {
    const domain = DOMAIN;
    const withNote = new FlowsList([
      ...FLOWS.flows,
      flow('take_note', [step.collect('n', 'note')]),
    ]);
    const setNote = { command: 'set slot', name: 'note', value: 'hello', extractor: 'LLM' };
    expect(
      processCommands({
        tracker: trackerWith([hashes(withNote)], [setNote]),
        flows: withNote,
        domain,
        now: () => T,
      }),
    ).toEqual([]);
    const events = processCommands({
      tracker: trackerWith(
        [hashes(withNote)],
        [{ command: 'start flow', flow: 'take_note' }, setNote],
      ),
      flows: withNote,
      domain,
      now: () => T,
      newFrameId: frameIds(),
    });
    expect(wire(events).map((e) => e.event)).toEqual(['slot', 'stack']);
    expect(wire(events)[0]).toEqual({ event: 'slot', name: 'note', value: 'hello' });
  });

  it('keeps only the last slot event per slot', () => {
    const events = run(
      trackerWith(
        [hashes(), ...ASKING_AMOUNT],
        [
          { command: 'set slot', name: 'amount', value: 5, extractor: 'NLU' },
          { command: 'set slot', name: 'amount', value: 7, extractor: 'NLU' },
        ],
      ),
    );
    expect(wire(events)).toEqual([{ event: 'slot', name: 'amount', value: 5 }]);
  });
});

// --- other commands --------------------------------------------------------------------------------

describe('processCommands: pattern commands', () => {
  const pushed = (commands: unknown[], history: DialogueEvent[] = [hashes()]): JsonObject[] => {
    const tracker = trackerWith(history, commands, { channel: 'web' });
    const events = run(tracker);
    return stackAfter(tracker, events) as JsonObject[];
  };

  it('pushes the pattern of each command', () => {
    const cases: [unknown, string, JsonObject][] = [
      [{ command: 'chitchat' }, 'pattern_cannot_handle', { reason: 'cannot_handle_chitchat' }],
      [{ command: 'knowledge' }, 'pattern_search', {}],
      [{ command: 'human handoff' }, 'pattern_human_handoff', {}],
      [{ command: 'repeat' }, 'pattern_repeat_bot_messages', {}],
      [{ command: 'restart' }, 'pattern_restart', {}],
      [{ command: 'session start' }, 'pattern_session_start', {}],
      [
        { command: 'cannot handle', reason: null },
        'pattern_cannot_handle',
        { reason: 'cannot_handle_default' },
      ],
      [
        {
          command: 'error',
          error_type: 'rasa_internal_error_user_input_too_long',
          info: { max_characters: 3 },
        },
        'pattern_internal_error',
        { error_type: 'rasa_internal_error_user_input_too_long', info: { max_characters: 3 } },
      ],
      [
        { command: 'clarify', options: ['transfer_money', 'nope', 'check_balance'] },
        'pattern_clarification',
        { names: ['transfer money', 'check balance'], clarification_options: '' },
      ],
    ];
    for (const [command, type, fields] of cases) {
      expect(pushed([command])).toEqual([
        { frame_id: 'F1', flow_id: type, step_id: 'START', ...fields, type },
      ]);
    }
  });

  it('skips a question and handles a code change only with an active flow', () => {
    expect(pushed([{ command: 'skip question' }])).toEqual([]);
    expect(pushed([{ command: 'handle code change' }])).toEqual([]);
    const top = pushed([{ command: 'skip question' }], [hashes(), ...ASKING_AMOUNT]).at(-1);
    expect(top?.type).toBe('pattern_skip_question');
  });

  it('ends the session with the user metadata', () => {
    const tracker = trackerWith([hashes()], [{ command: 'session end' }], { channel: 'web' });
    expect(wire(run(tracker))).toEqual([
      { event: 'session_ended', metadata: { _reason: 'user disconnected', channel: 'web' } },
    ]);
  });
});

// --- code change -------------------------------------------------------------------------------------

describe('processCommands: code change', () => {
  it('gives every flow a stable fingerprint that changes with the flow', () => {
    expect(flowFingerprint(TRANSFER)).toBe(flowFingerprint({ ...TRANSFER }));
    expect(flowFingerprint(TRANSFER)).toMatch(/^[0-9a-f]{32}$/);
    expect(flowFingerprint({ ...TRANSFER, description: 'other' })).not.toBe(
      flowFingerprint(TRANSFER),
    );
  });

  it('replaces the commands by handle code change when a flow on the stack changed', () => {
    const changed = flow('transfer_money', [step.collect('collect_amount', 'amount')]);
    const newFlows = new FlowsList([changed, BALANCE, COLLECT_PATTERN]);
    const tracker = trackerWith(
      [hashes(), ...ASKING_AMOUNT],
      [{ command: 'start flow', flow: 'check_balance' }],
    );
    const events = run(tracker, newFlows);
    expect(wire(events)).toEqual([
      { event: 'slot', name: 'flow_hashes', value: flowFingerprints(newFlows) },
      {
        event: 'stack',
        update: [
          {
            op: 'add',
            path: '/2',
            value: {
              frame_id: 'F1',
              flow_id: 'pattern_code_change',
              step_id: 'START',
              type: 'pattern_code_change',
            },
          },
        ],
      },
    ]);
  });

  it('treats a flow on the stack that no longer exists as changed', () => {
    const newFlows = new FlowsList([BALANCE, COLLECT_PATTERN]);
    // The start is replaced by handle code change, which needs the (gone) flow: nothing runs.
    const tracker = trackerWith(
      [hashes(), ...ASKING_AMOUNT],
      [{ command: 'start flow', flow: 'check_balance' }],
    );
    const events = wire(run(tracker, newFlows));
    expect(events).toEqual([
      { event: 'slot', name: 'flow_hashes', value: flowFingerprints(newFlows) },
    ]);
  });

  it('does not call it a code change when no fingerprints were stored', () => {
    const tracker = trackerWith([...ASKING_AMOUNT], [{ command: 'cancel flow' }]);
    expect(wire(run(tracker)).map((e) => e.event)).toEqual(['slot', 'flow_cancelled', 'stack']);
  });

  it('reads stored fingerprints from the latest event when the domain has no flow_hashes slot', () => {
    const domain = Domain.fromObject({});
    const user = userUttered({ timestamp: T, text: 'x', parseData: { commands: [] } });
    const tracker = DialogueStateTracker.fromEvents('c', [hashes(), user], domain);
    expect(processCommands({ tracker, flows: FLOWS, domain, now: () => T })).toEqual([]);
    const fresh = DialogueStateTracker.fromEvents('c', [user], domain);
    expect(processCommands({ tracker: fresh, flows: FLOWS, domain, now: () => T })).toHaveLength(1);
  });
});
