import { Domain } from 'src/core/domain/domain';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { slotSet } from 'src/core/events/slot-set';
import { type Flow } from './flow';
import { advanceFlows, MAX_NUMBER_OF_STEPS, userFlowFrame } from './flow-executor';
import { FlowsList } from './flows-list';
import {
  counter,
  flow,
  frameIds,
  PATTERN_ACTION_NAMES,
  PATTERN_RESPONSES,
  PATTERNS,
  runTurn,
  step,
  trackerWith,
} from './testing-flows';

const transferMoney = flow('transfer_money', [
  step.collect('ask_recipient', 'recipient'),
  step.collect('ask_amount', 'amount', {
    rejections: [{ if: 'slots.amount <= 0', utter: 'utter_invalid_amount' }],
  }),
  step.collect('confirm', 'confirm_transfer', {
    askBeforeFilling: true,
    next: [
      { if: 'slots.confirm_transfer', then: [step.action('done', 'utter_transfer_done', 'END')] },
      { else: [step.action('not_done', 'utter_transfer_cancelled', 'END')] },
    ],
  }),
]);

const domain = Domain.fromObject({
  slots: {
    recipient: { type: 'text', mappings: [] },
    amount: { type: 'float', mappings: [] },
    confirm_transfer: { type: 'bool', mappings: [] },
    counter: { type: 'float', initial_value: 3, mappings: [] },
    note: { type: 'text', mappings: [] },
  },
  responses: {
    ...PATTERN_RESPONSES,
    utter_ask_recipient: [{ text: 'Who should receive the money?' }],
    utter_ask_amount: [{ text: 'How much do you want to send?' }],
    utter_invalid_amount: [{ text: 'The amount has to be more than zero.' }],
    utter_ask_confirm_transfer: [{ text: 'Send {amount} to {recipient}?' }],
    utter_transfer_done: [{ text: 'Done, {amount} is on its way to {recipient}.' }],
    utter_transfer_cancelled: [{ text: 'Okay, I did not send anything.' }],
    utter_greet: [{ text: 'Hi!' }],
    utter_big: [{ text: 'big' }],
    utter_small: [{ text: 'small' }],
    utter_bye: [{ text: 'bye' }],
    utter_step: [{ text: 'step' }],
  },
  actions: PATTERN_ACTION_NAMES,
});

function listOf(...flows: Flow[]): FlowsList {
  return new FlowsList([...flows, ...PATTERNS]);
}

/** A compact view of events: `stack:<ops>`, `flow_started:<id>`, `slot:<name>=<value>`, … */
function shape(events: readonly DialogueEvent[]): string[] {
  return events.map((e) => {
    if (e.type === 'stack') {
      return `stack:${(JSON.parse(e.update) as { op: string; path: string; value?: unknown }[])
        .map((o) => `${o.op} ${o.path}${typeof o.value === 'string' ? `=${o.value}` : ''}`)
        .join(',')}`;
    }
    if (e.type === 'flow_started') return `flow_started:${String(e.flowId)}`;
    if (e.type === 'flow_completed') {
      return `flow_completed:${String(e.flowId)}@${String(e.stepId)}`;
    }
    if (e.type === 'flow_resumed') return `flow_resumed:${String(e.flowId)}@${String(e.stepId)}`;
    if (e.type === 'slot') return `slot:${e.name}=${JSON.stringify(e.value)}`;
    if (e.type === 'action') return `action:${String(e.name)}`;
    if (e.type === 'bot') return `bot:${String(e.text)}`;
    return e.type;
  });
}

describe('advanceFlows', () => {
  it('gives no prediction for an empty stack', () => {
    const tracker = trackerWith(domain, []);
    const p = advanceFlows({ tracker, flows: listOf(transferMoney), domain, now: counter() });
    expect(p).toEqual({
      actionName: null,
      events: [],
      metadata: { active_flow: null, step_id: null },
    });
  });

  it('starts a flow with a collect step in the order of the worked trace', () => {
    const tracker = trackerWith(domain, [userFlowFrame('transfer_money', 'U1', 'regular')]);
    const p = advanceFlows({
      tracker,
      flows: listOf(transferMoney),
      domain,
      now: counter(),
      newFrameId: frameIds(),
    });
    expect(p.actionName).toBe('action_run_slot_rejections');
    expect(shape(p.events)).toEqual([
      'stack:replace /0/step_id=ask_recipient',
      'stack:add /1',
      'flow_started:transfer_money',
      'stack:replace /1/step_id=start',
      'flow_started:pattern_collect_information',
    ]);
    const push = JSON.parse((p.events[1] as { update: string }).update) as unknown[];
    expect(push).toEqual([
      {
        op: 'add',
        path: '/1',
        value: {
          frame_id: 'F1',
          flow_id: 'pattern_collect_information',
          step_id: 'START',
          collect: 'recipient',
          utter: 'utter_ask_recipient',
          collect_action: 'action_ask_recipient',
          rejections: [],
          type: 'pattern_collect_information',
        },
      },
    ]);
    // Python's json.dumps separators, as Rasa writes the patch.
    expect((p.events[0] as { update: string }).update).toBe(
      '[{"op": "replace", "path": "/0/step_id", "value": "ask_recipient"}]',
    );
    // flow_started carries the context (inside a collect, the user flow's ids).
    expect(p.events[2]?.metadata).toMatchObject({
      flow_id: 'transfer_money',
      step_id: 'ask_recipient',
    });
    expect(p.events[4]?.metadata).toMatchObject({
      flow_id: 'transfer_money',
      collect: 'recipient',
    });
    expect(p.metadata).toEqual({ active_flow: 'transfer_money', step_id: 'ask_recipient' });
  });

  it('runs the worked trace end to end: ask, listen, fill, next collect, … completed', async () => {
    const flows = listOf(transferMoney);
    const now = counter();
    const ids = frameIds();
    const tracker = trackerWith(domain, [userFlowFrame('transfer_money', 'U1', 'regular')]);

    const first = await runTurn(tracker, flows, domain, now, ids);
    expect(first.actions).toEqual([
      'action_run_slot_rejections',
      'utter_ask_recipient',
      'action_listen',
    ]);
    const ask = first.events.find((e) => e.type === 'bot');
    expect(ask).toMatchObject({
      text: 'Who should receive the money?',
      metadata: {
        utter_action: 'utter_ask_recipient',
        active_flow: 'transfer_money',
        step_id: 'ask_recipient',
      },
    });
    // The skipped `validate_recipient` and `action_ask_recipient` only move the stack.
    expect(first.predictions[1]?.metadata).toEqual({
      active_flow: 'transfer_money',
      step_id: 'ask_recipient',
    });

    tracker.update(slotSet({ name: 'recipient', value: 'Joe', timestamp: now() }));
    const second = await runTurn(tracker, flows, domain, now, ids);
    // Rejections of the filled slot, then those of the next collect (its slot never set: none).
    expect(second.actions).toEqual([
      'action_run_slot_rejections',
      'action_run_slot_rejections',
      'utter_ask_amount',
      'action_listen',
    ]);
    // Stack changes between two other events go out as one `stack` event; the move onto the
    // next collect step keeps its own.
    expect(shape(second.predictions[1]?.events ?? [])).toEqual([
      'stack:remove /1',
      'flow_completed:pattern_collect_information@validate',
      'stack:replace /0/step_id=ask_amount',
      'stack:add /1',
      'flow_started:pattern_collect_information',
    ]);
    const pushed = JSON.parse((second.predictions[1]?.events[3] as { update: string }).update);
    expect(pushed).toMatchObject([
      { op: 'add', path: '/1', value: { collect: 'amount', step_id: 'start' } },
    ]);

    // A rejected value: the slot is reset, the rejection said, and the question asked again.
    tracker.update(slotSet({ name: 'amount', value: -5, timestamp: now() }));
    const rejected = await runTurn(tracker, flows, domain, now, ids);
    expect(rejected.actions).toEqual([
      'action_run_slot_rejections',
      'utter_ask_amount',
      'action_listen',
    ]);
    expect(shape(rejected.events).filter((s) => /^(bot|slot)/.test(s))).toEqual([
      'slot:amount=null',
      'bot:The amount has to be more than zero.',
      'bot:How much do you want to send?',
    ]);

    tracker.update(slotSet({ name: 'amount', value: '50', timestamp: now() }));
    const third = await runTurn(tracker, flows, domain, now, ids);
    // The typed value (a float slot) is set by the rejections step.
    expect(shape(third.events)).toContain('slot:amount=50');
    expect(tracker.getSlot('amount')).toBe(50);
    expect(third.actions).toEqual([
      'action_run_slot_rejections',
      'action_run_slot_rejections',
      'utter_ask_confirm_transfer',
      'action_listen',
    ]);
    // ask_before_filling: the slot is emptied before asking.
    expect(shape(third.events)).toContain('slot:confirm_transfer=null');
    expect(third.events.find((e) => e.type === 'bot')).toMatchObject({ text: 'Send 50 to Joe?' });

    tracker.update(slotSet({ name: 'confirm_transfer', value: true, timestamp: now() }));
    const last = await runTurn(tracker, flows, domain, now, ids);
    expect(last.actions).toEqual([
      'action_run_slot_rejections',
      'utter_transfer_done',
      'utter_can_do_something_else',
      'action_listen',
    ]);
    const ending = shape(last.predictions[2]?.events ?? []);
    // The move to END, the pop of the user flow and pattern_completed in its place: one `stack`
    // event; its slots are reset, then `flow_completed` (Rasa appends it to the step's events).
    expect(ending).toEqual([
      'stack:replace /0',
      'slot:recipient=null',
      'slot:amount=null',
      'slot:confirm_transfer=null',
      'flow_completed:transfer_money@done',
      'stack:replace /0/step_id=completed',
      'flow_started:pattern_completed',
    ]);
    expect(last.events.filter((e) => e.type === 'bot').map((e) => e.text)).toEqual([
      'Done, 50 is on its way to Joe.',
      'What else can I help you with?',
    ]);
    expect(shape(last.predictions[3]?.events ?? [])).toEqual([
      'stack:remove /0',
      'flow_completed:pattern_completed@completed',
    ]);
    expect(tracker.stack).toEqual([]);
    expect(last.predictions[3]?.metadata).toEqual({ active_flow: null, step_id: null });
  });

  it('branches on the first `if` that holds, else on `else`', () => {
    const branching = flow('branching', [
      step.noop('decide', [
        { if: 'slots.counter > 10', then: 'big' },
        { if: "slots.note = 'small'", then: 'small' },
        { else: 'bye' },
      ]),
      step.action('big', 'utter_big', 'END'),
      step.action('small', 'utter_small', 'END'),
      step.action('bye', 'utter_bye', 'END'),
    ]);
    const predict = (events: DialogueEvent[]): string | null =>
      advanceFlows({
        tracker: trackerWith(domain, [userFlowFrame('branching', 'U1', 'regular')], events),
        flows: listOf(branching),
        domain,
        now: counter(),
      }).actionName;
    expect(predict([])).toBe('utter_bye');
    expect(predict([slotSet({ name: 'note', value: 'small', timestamp: 0 })])).toBe('utter_small');
    expect(
      predict([
        slotSet({ name: 'note', value: 'small', timestamp: 0 }),
        slotSet({ name: 'counter', value: 11, timestamp: 0 }),
      ]),
    ).toBe('utter_big');
  });

  it('renders {{context.*}} in conditions and action names', () => {
    const contextual = flow('contextual', [
      step.noop('check', [
        { if: "'{{context.flow_id}}' = 'contextual'", then: 'named' },
        { else: 'END' },
      ]),
      step.action('named', 'utter_{{context.step_id}}', 'END'),
    ]);
    const extra = Domain.fromObject({ responses: { utter_named: [{ text: 'named' }] } });
    const p = advanceFlows({
      tracker: trackerWith(extra, [userFlowFrame('contextual', 'U1', 'regular')]),
      flows: listOf(contextual),
      domain: extra,
      now: counter(),
    });
    expect(p.actionName).toBe('utter_named');
  });

  it('skips action steps whose action the domain does not know', () => {
    const skipping = flow('skipping', [
      step.action('unknown', 'action_nobody_defined'),
      step.action('greet', 'utter_greet'),
    ]);
    const p = advanceFlows({
      tracker: trackerWith(domain, [userFlowFrame('skipping', 'U1', 'regular')]),
      flows: listOf(skipping),
      domain,
      now: counter(),
    });
    expect(p.actionName).toBe('utter_greet');
    expect(p.metadata).toEqual({ active_flow: 'skipping', step_id: 'greet' });
  });

  it('links: the linked flow starts when the linking flow has ended', async () => {
    const linking = flow('linking', [step.action('hi', 'utter_greet'), step.link('go', 'linked')]);
    const linked = flow('linked', [step.action('bye', 'utter_bye')]);
    const tracker = trackerWith(domain, [userFlowFrame('linking', 'U1', 'regular')]);
    const turn = await runTurn(tracker, listOf(linking, linked), domain, counter(), frameIds());
    expect(turn.actions).toEqual([
      'utter_greet',
      'utter_bye',
      'utter_can_do_something_else',
      'action_listen',
    ]);
    const link = shape(turn.predictions[1]?.events ?? []);
    // The link step puts the linked frame under the linking one, which then ends: one `stack`
    // event puts the linked frame in its place.
    expect(link.slice(0, 4)).toEqual([
      'stack:replace /0',
      'flow_completed:linking@go',
      'stack:replace /0/step_id=bye',
      'flow_started:linked',
    ]);
    const added = JSON.parse((turn.predictions[1]?.events[0] as { update: string }).update) as {
      value: unknown;
    }[];
    expect(added[0]?.value).toEqual({
      frame_id: 'F1',
      flow_id: 'linked',
      step_id: 'START',
      frame_type: 'link',
      type: 'flow',
    });
  });

  it('calls: the called flow runs on top, then the caller continues after the call step', async () => {
    const caller = flow('caller', [step.call('sub', 'callee'), step.action('after', 'utter_bye')]);
    const callee = flow('callee', [
      step.setSlots('set_note', { note: 'from callee' }),
      step.action('inside', 'utter_step'),
    ]);
    const tracker = trackerWith(domain, [userFlowFrame('caller', 'U1', 'regular')]);
    const turn = await runTurn(tracker, listOf(caller, callee), domain, counter(), frameIds());
    expect(turn.actions).toEqual([
      'utter_step',
      'utter_bye',
      'utter_can_do_something_else',
      'action_listen',
    ]);
    const shapes = shape(turn.events);
    // The callee's frame keeps its set slot (a call frame resets nothing); the caller resets
    // the callee's slots when it ends.
    const calleeEnd = shapes.indexOf('flow_completed:callee@inside');
    const callerEnd = shapes.indexOf('flow_completed:caller@after');
    expect(calleeEnd).toBeGreaterThan(-1);
    expect(shapes.slice(0, calleeEnd)).not.toContain('slot:note=null');
    expect(shapes.slice(calleeEnd, callerEnd).at(-1)).toBe('slot:note=null');
    expect(shapes.filter((x) => x === 'slot:note=null')).toHaveLength(1);
    expect(turn.predictions[0]?.metadata).toEqual({ active_flow: 'callee', step_id: 'inside' });
  });

  it('set_slots sets slots; at the end slots go back to initial values unless persisted', async () => {
    const setting = flow(
      'setting',
      [
        step.setSlots('set', { counter: 7, note: 'kept', recipient: 'Ann' }),
        step.action('said', 'utter_step'),
      ],
      { persistedSlots: ['note'] },
    );
    const tracker = trackerWith(domain, [userFlowFrame('setting', 'U1', 'regular')]);
    const turn = await runTurn(tracker, listOf(setting), domain, counter(), frameIds());
    const shapes = shape(turn.events);
    expect(shapes.slice(0, 5)).toEqual([
      'stack:replace /0/step_id=set',
      'flow_started:setting',
      'slot:counter=7',
      'slot:note="kept"',
      'slot:recipient="Ann"',
    ]);
    const end = shapes.indexOf('flow_completed:setting@said');
    expect(shapes.slice(end - 2, end)).toEqual(['slot:counter=3', 'slot:recipient=null']);
    expect(tracker.getSlot('note')).toBe('kept');
    expect(tracker.getSlot('counter')).toBe(3);
  });

  it('keeps collected slots with reset_after_flow_ends false, and the flow may skip pattern_completed', async () => {
    const keeping = flow(
      'keeping',
      [step.collect('ask', 'recipient', { resetAfterFlowEnds: false })],
      { runPatternCompleted: false },
    );
    const tracker = trackerWith(
      domain,
      [userFlowFrame('keeping', 'U1', 'regular')],
      [slotSet({ name: 'recipient', value: 'Joe', timestamp: 0 })],
    );
    const turn = await runTurn(tracker, listOf(keeping), domain, counter(), frameIds());
    expect(turn.actions).toEqual(['action_run_slot_rejections', 'action_listen']);
    expect(shape(turn.events)).not.toContain('slot:recipient=null');
    expect(shape(turn.events)).not.toContain('flow_started:pattern_completed');
    expect(tracker.getSlot('recipient')).toBe('Joe');
    expect(tracker.stack).toEqual([]);
  });

  it('resumes an interrupted flow: continue pattern and flow_resumed after flow_completed', async () => {
    const greet = flow('greet', [step.action('hi', 'utter_greet')]);
    const tracker = trackerWith(domain, [
      { ...userFlowFrame('transfer_money', 'U1', 'regular'), step_id: 'ask_amount' },
      userFlowFrame('greet', 'U2', 'interrupt'),
    ]);
    const turn = await runTurn(
      tracker,
      listOf(transferMoney, greet),
      domain,
      counter(),
      frameIds(),
    );
    expect(turn.actions).toEqual([
      'utter_greet',
      'utter_flow_continue_interrupted',
      'action_run_slot_rejections',
      'utter_ask_confirm_transfer',
      'action_listen',
    ]);
    const end = shape(turn.predictions[1]?.events ?? []);
    expect(end).toEqual([
      'stack:replace /1',
      'flow_completed:greet@hi',
      'flow_resumed:transfer_money@ask_amount',
      'stack:replace /1/step_id=continue',
      'flow_started:pattern_continue_interrupted',
    ]);
    expect(turn.events.filter((e) => e.type === 'bot').map((e) => e.text)[1]).toBe(
      "Let's continue with transfer money.",
    );
  });

  it('cancels through a cancel frame: frames wrap up, then pattern_completed', async () => {
    const tracker = trackerWith(domain, [
      { ...userFlowFrame('transfer_money', 'U1', 'regular'), step_id: 'ask_amount' },
      {
        frame_id: 'C1',
        flow_id: 'pattern_collect_information',
        step_id: 'listen',
        collect: 'amount',
        utter: 'utter_ask_amount',
        collect_action: 'action_ask_amount',
        rejections: [],
        type: 'pattern_collect_information',
      },
      {
        frame_id: 'X1',
        flow_id: 'pattern_cancel_flow',
        step_id: 'START',
        canceled_name: 'transfer money',
        canceled_frames: ['C1', 'U1'],
        type: 'pattern_cancel_flow',
      },
    ]);
    const turn = await runTurn(tracker, listOf(transferMoney), domain, counter(), frameIds());
    expect(turn.actions).toEqual([
      'action_cancel_flow',
      'utter_flow_cancelled_rasa',
      'utter_can_do_something_else',
      'action_listen',
    ]);
    expect(turn.events.filter((e) => e.type === 'bot').map((e) => e.text)).toEqual([
      'Okay, stopping transfer money.',
      'What else can I help you with?',
    ]);
    const shapes = shape(turn.events);
    expect(shapes).toContain('flow_completed:pattern_cancel_flow@cancelled');
    expect(shapes).toContain('flow_completed:pattern_collect_information@NEXT:END');
    expect(shapes).toContain('flow_completed:transfer_money@NEXT:END');
    expect(tracker.stack).toEqual([]);
  });

  it('cancels the flow and reports an internal error when nothing can ask for a slot', async () => {
    const unaskable = flow('unaskable', [step.collect('ask', 'note')]);
    const tracker = trackerWith(domain, [userFlowFrame('unaskable', 'U1', 'regular')]);
    const turn = await runTurn(tracker, listOf(unaskable), domain, counter(), frameIds());
    expect(turn.actions).toEqual([
      'utter_internal_error_rasa',
      'action_cancel_flow',
      'utter_flow_cancelled_rasa',
      'utter_can_do_something_else',
      'action_listen',
    ]);
    expect(turn.events.filter((e) => e.type === 'bot').map((e) => e.text)[1]).toBe(
      'Okay, stopping unaskable.',
    );
    const p = turn.predictions[0] as { events: DialogueEvent[] };
    const stackAdds = p.events
      .filter((e) => e.type === 'stack')
      .flatMap((e) => JSON.parse(e.update) as { op: string; value?: { type?: string } }[])
      .filter((o) => o.op === 'add')
      .map((o) => o.value?.type);
    expect(stackAdds).toEqual(['pattern_cancel_flow', 'pattern_internal_error']);
  });

  it('trips the circuit breaker after 250 steps: ends the flow and reports an internal error', () => {
    const looping = flow('looping', [step.noop('a', 'b'), step.noop('b', 'a')]);
    const p = advanceFlows({
      tracker: trackerWith(domain, [userFlowFrame('looping', 'U1', 'regular')]),
      flows: listOf(looping),
      domain,
      now: counter(),
      newFrameId: frameIds(),
    });
    expect(MAX_NUMBER_OF_STEPS).toBe(250);
    expect(p.actionName).toBe('utter_internal_error_rasa');
    expect(shape(p.events).slice(0, 1)).toEqual(['stack:replace /0/step_id=NEXT:END,add /1']);
    expect(p.metadata).toEqual({ active_flow: 'pattern_internal_error', step_id: 'error' });
  });

  it('treats a step with no matching branch like a trip', () => {
    const stuck = flow('stuck', [step.noop('n', [{ if: 'slots.counter > 100', then: 'END' }])]);
    const p = advanceFlows({
      tracker: trackerWith(domain, [userFlowFrame('stuck', 'U1', 'regular')]),
      flows: listOf(stuck),
      domain,
      now: counter(),
    });
    expect(p.actionName).toBe('utter_internal_error_rasa');
  });

  it('listens when the top frame belongs to another policy', () => {
    const p = advanceFlows({
      tracker: trackerWith(domain, [{ frame_id: 'S1', type: 'search' }]),
      flows: listOf(),
      domain,
      now: counter(),
    });
    expect(p).toEqual({
      actionName: 'action_listen',
      events: [],
      metadata: { active_flow: null, step_id: null },
    });
  });
});
