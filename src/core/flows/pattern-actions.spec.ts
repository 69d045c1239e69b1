import { type ActionContext } from 'src/core/actions/action';
import { actionFor } from 'src/core/actions/action-registry';
import { Domain } from 'src/core/domain/domain';
import { botUttered } from 'src/core/events/bot-uttered';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { dialogueStackUpdated } from 'src/core/events/dialogue-stack-updated';
import { type JsonObject } from 'src/core/events/event-base';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { patternFrame, userFlowFrame } from './flow-executor';
import { CancelFlowAction, joinOptions, patternActions } from './pattern-actions';
import { DialogueStack } from './stack';
import { counter, trackerWith } from './testing-flows';

const NAMES = [...patternActions().keys()];

const domain = Domain.fromObject({
  slots: {
    size: { type: 'categorical', values: ['small', 'large'], mappings: [] },
    amount: { type: 'float', mappings: [] },
    agree: { type: 'bool', mappings: [] },
    city: { type: 'text', mappings: [] },
  },
  responses: {
    utter_categorical_slot_rejection: [{ text: 'Please pick one of the options.' }],
    utter_too_small: [{ text: 'Too small: {amount}.' }],
    utter_stopping: [
      {
        text: 'Stopping {{ context.canceled_name }} ({{ city }}).',
        metadata: { template: 'jinja' },
      },
    ],
    utter_plain: [{ text: 'In {city}.' }],
    utter_internal_error_rasa: [{ text: 'Sorry, I am having trouble with that.' }],
  },
  actions: NAMES,
});

function context(tracker: DialogueStateTracker): ActionContext {
  return {
    tracker,
    domain,
    channel: null,
    now: counter(),
    endpoint: null,
    actionFor: (n) => actionFor(n, domain),
  };
}

function run(name: string, tracker: DialogueStateTracker): Promise<DialogueEvent[]> {
  return actionFor(name, domain).run(context(tracker));
}

function collectFrame(slot: string, rejections: JsonObject[] = []): JsonObject {
  return patternFrame('pattern_collect_information', 'C1', {
    collect: slot,
    utter: `utter_ask_${slot}`,
    collect_action: `action_ask_${slot}`,
    rejections,
  });
}

/** The stack after applying the actions' `stack` events. */
function stackAfter(tracker: DialogueStateTracker, events: DialogueEvent[]): readonly unknown[] {
  const copy = tracker.copy();
  for (const e of events) copy.update(e);
  return copy.stack;
}

const USER = userFlowFrame('order', 'U1', 'regular');

/** A tracker whose stack went through `states`, one `stack` event each. */
function history(states: readonly JsonObject[][]): DialogueStateTracker {
  const tracker = trackerWith(domain, []);
  let before: readonly unknown[] = [];
  for (const state of states) {
    const stack = new DialogueStack(state);
    tracker.update(
      dialogueStackUpdated({ timestamp: 0, update: JSON.stringify(stack.patchFrom(before)) }),
    );
    before = stack.toJSON();
  }
  return tracker;
}

describe('built-in CALM actions', () => {
  it('are found by name, also when the domain lists them as actions', () => {
    expect(NAMES).toEqual([
      'action_run_slot_rejections',
      'action_correct_flow_slot',
      'action_cancel_flow',
      'action_clarify_flows',
      'action_clean_stack',
      'action_trigger_chitchat',
      'action_trigger_search',
      'action_repeat_bot_messages',
    ]);
    expect(actionFor('action_cancel_flow', domain)).toBeInstanceOf(CancelFlowAction);
  });

  describe('action_run_slot_rejections', () => {
    it('does nothing before the slot was ever set', async () => {
      const tracker = trackerWith(domain, [USER, collectFrame('size')]);
      expect(await run('action_run_slot_rejections', tracker)).toEqual([]);
    });

    it('rejects a categorical value the slot does not list', async () => {
      const tracker = trackerWith(
        domain,
        [USER, collectFrame('size')],
        [slotSet({ name: 'size', value: 'huge', timestamp: 0 })],
      );
      const events = await run('action_run_slot_rejections', tracker);
      expect(events).toMatchObject([
        { type: 'slot', name: 'size', value: null },
        {
          type: 'bot',
          text: 'Please pick one of the options.',
          metadata: { utter_action: 'utter_categorical_slot_rejection' },
        },
      ]);
      const ok = trackerWith(
        domain,
        [USER, collectFrame('size')],
        [slotSet({ name: 'size', value: 'large', timestamp: 0 })],
      );
      expect(await run('action_run_slot_rejections', ok)).toEqual([]);
    });

    it('runs the first rejection that holds, on the typed value', async () => {
      const rejections = [
        { if: 'slots.amount < 10', utter: 'utter_too_small' },
        { if: 'slots.amount < 100', utter: 'utter_never' },
      ];
      const tracker = trackerWith(
        domain,
        [USER, collectFrame('amount', rejections)],
        [slotSet({ name: 'amount', value: '5', timestamp: 0 })],
      );
      expect(await run('action_run_slot_rejections', tracker)).toMatchObject([
        { type: 'slot', name: 'amount', value: null },
        { type: 'bot', text: 'Too small: 5.', metadata: { utter_action: 'utter_too_small' } },
      ]);
    });

    it('sets the typed value when it is accepted, and maps "None"-like strings to null', async () => {
      const typed = trackerWith(
        domain,
        [USER, collectFrame('agree')],
        [slotSet({ name: 'agree', value: 'true', timestamp: 0 })],
      );
      expect(await run('action_run_slot_rejections', typed)).toMatchObject([
        { type: 'slot', name: 'agree', value: true },
      ]);
      const missing = trackerWith(
        domain,
        [USER, collectFrame('city')],
        [slotSet({ name: 'city', value: '[missing]', timestamp: 0 })],
      );
      expect(await run('action_run_slot_rejections', missing)).toMatchObject([
        { type: 'slot', name: 'city', value: null },
      ]);
    });

    it('answers an unreadable rejection condition with the internal error response', async () => {
      const tracker = trackerWith(
        domain,
        [USER, collectFrame('amount', [{ if: 'slots.amount <', utter: 'utter_too_small' }])],
        [slotSet({ name: 'amount', value: 5, timestamp: 0 })],
      );
      expect(await run('action_run_slot_rejections', tracker)).toMatchObject([
        { type: 'slot', name: 'amount', value: null },
        { type: 'bot', metadata: { utter_action: 'utter_internal_error_rasa' } },
      ]);
    });
  });

  it('action_cancel_flow sets the cancelled frames to NEXT:END', async () => {
    const cancel = patternFrame('pattern_cancel_flow', 'X1', {
      canceled_name: 'order',
      canceled_frames: ['C1', 'U1'],
    });
    const tracker = trackerWith(domain, [USER, collectFrame('city'), cancel]);
    const events = await run('action_cancel_flow', tracker);
    expect(events.map((e) => e.type)).toEqual(['stack']);
    expect(stackAfter(tracker, events)).toMatchObject([
      { frame_id: 'U1', step_id: 'NEXT:END' },
      { frame_id: 'C1', step_id: 'NEXT:END' },
      { frame_id: 'X1', step_id: 'START' },
    ]);
  });

  it('action_clarify_flows writes the options as "a, b or c"', async () => {
    expect([joinOptions([]), joinOptions(['a']), joinOptions(['a', 'b'])]).toEqual([
      '',
      'a',
      'a or b',
    ]);
    const frame = patternFrame('pattern_clarification', 'Q1', {
      names: ['transfer money', 'check balance', 'add contact'],
      clarification_options: '',
    });
    const tracker = trackerWith(domain, [frame]);
    const events = await run('action_clarify_flows', tracker);
    expect(stackAfter(tracker, events)).toMatchObject([
      { clarification_options: 'transfer money, check balance or add contact' },
    ]);
  });

  it('action_clean_stack ends every flow frame and drops the others', async () => {
    const tracker = trackerWith(domain, [
      USER,
      { ...userFlowFrame('other', 'U2', 'interrupt'), step_id: 'x' },
      { frame_id: 'S1', type: 'search' },
    ]);
    const events = await run('action_clean_stack', tracker);
    expect(stackAfter(tracker, events)).toEqual([
      { ...USER, step_id: 'NEXT:END' },
      { ...userFlowFrame('other', 'U2', 'regular'), step_id: 'NEXT:END' },
    ]);
  });

  it('action_trigger_chitchat and action_trigger_search push their frames', async () => {
    const tracker = trackerWith(domain, [USER]);
    const chitchat = stackAfter(tracker, await run('action_trigger_chitchat', tracker));
    expect(chitchat[1]).toMatchObject({ type: 'chitchat' });
    const search = stackAfter(tracker, await run('action_trigger_search', tracker));
    expect(search[1]).toMatchObject({ type: 'search' });
  });

  it('action_repeat_bot_messages repeats the bot messages before the latest user message', async () => {
    const events = [
      botUttered({ text: 'old', timestamp: 1 }),
      userUttered({ text: 'a', timestamp: 2 }),
      botUttered({ text: 'one', timestamp: 3 }),
      botUttered({ text: 'two', timestamp: 4 }),
      userUttered({ text: 'say again?', timestamp: 5 }),
    ];
    const tracker = trackerWith(
      domain,
      [patternFrame('pattern_repeat_bot_messages', 'R1')],
      events,
    );
    const repeated = await run('action_repeat_bot_messages', tracker);
    expect(repeated.map((e) => (e.type === 'bot' ? e.text : e.type))).toEqual(['one', 'two']);
    // Inside a collect the question is repeated anyway.
    const collecting = trackerWith(
      domain,
      [USER, collectFrame('city'), patternFrame('pattern_repeat_bot_messages', 'R1')],
      events,
    );
    expect(await run('action_repeat_bot_messages', collecting)).toEqual([]);
  });

  it('action_correct_flow_slot sets the corrected slots and moves the flow back', async () => {
    const at = (step: string): JsonObject => ({ ...USER, step_id: step });
    const correction = patternFrame('pattern_correction', 'K1', {
      is_reset_only: false,
      corrected_slots: { city: 'Paris' },
      reset_flow_id: 'order',
      reset_step_id: 'ask_city',
    });
    // History: the flow stood on ask_city, moved on to ask_size, then the correction came.
    const moved = history([
      [at('ask_city')],
      [at('ask_size'), collectFrame('size')],
      [at('ask_size'), collectFrame('size'), correction],
    ]);
    const events = await run('action_correct_flow_slot', moved);
    expect(events.at(-1)).toMatchObject({ type: 'slot', name: 'city', value: 'Paris' });
    expect(stackAfter(moved, events)).toMatchObject([
      { frame_id: 'U1', step_id: 'NEXT:ask_city' },
      { frame_id: 'C1', step_id: 'NEXT:END' },
      { frame_id: 'K1', type: 'pattern_correction' },
    ]);
  });

  it('renders Jinja responses with the stack context next to the slots', async () => {
    const cancel = patternFrame('pattern_cancel_flow', 'X1', {
      canceled_name: 'order pizza',
      canceled_frames: [],
    });
    const tracker = trackerWith(
      domain,
      [cancel],
      [slotSet({ name: 'city', value: 'Rome', timestamp: 0 })],
    );
    expect(await run('utter_stopping', tracker)).toMatchObject([
      { type: 'bot', text: 'Stopping order pizza (Rome).' },
    ]);
    // Without the Jinja marker, `{slot}` formatting as before.
    expect(await run('utter_plain', tracker)).toMatchObject([{ type: 'bot', text: 'In Rome.' }]);
  });
});
