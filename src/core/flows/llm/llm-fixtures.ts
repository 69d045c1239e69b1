import { type SlotDefinition } from 'src/core/domain/slot-definition';
import { botUttered } from 'src/core/events/bot-uttered';
import { slotSet } from 'src/core/events/slot-set';
import { userUttered } from 'src/core/events/user-uttered';
import { type CollectStep, type Flow, type FlowStep } from 'src/core/flows/flow';
import { FlowsList } from 'src/core/flows/flows-list';
import { flow } from 'src/core/flows/testing-flows';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

/**
 * Small flows, slots and trackers for the LLM generator specs (unit specs beside the code and
 * the integration specs against the fake LLM server). Not used by product code.
 */

export function slotDef(name: string, type = 'text', values?: readonly unknown[]): SlotDefinition {
  return {
    name,
    type,
    initialValue: null,
    influenceConversation: false,
    ...(values === undefined ? {} : { values }),
    mappings: [],
    properties: {},
  };
}

export function collect(
  flowId: string,
  slot: string,
  options: { description?: string; askBeforeFilling?: boolean } = {},
): CollectStep {
  return {
    kind: 'collect',
    id: `${flowId}_collect_${slot}`,
    idGiven: false,
    next: null,
    description: options.description ?? null,
    metadata: null,
    collect: slot,
    utter: `utter_ask_${slot}`,
    collectAction: `action_ask_${slot}`,
    askBeforeFilling: options.askBeforeFilling ?? false,
    resetAfterFlowEnds: true,
    rejections: [],
  };
}

export function testFlow(
  id: string,
  description: string,
  steps: readonly FlowStep[] = [],
  extra: Partial<Flow> = {},
): Flow {
  return flow(id, steps, { description, builtIn: false, ...extra });
}

export const BANK_SLOTS: readonly SlotDefinition[] = [
  slotDef('recipient'),
  slotDef('amount', 'float'),
  slotDef('confirm', 'bool'),
  slotDef('account_type', 'categorical', ['checking', 'savings', '__other__']),
];

export function bankFlows(): FlowsList {
  return new FlowsList([
    testFlow('transfer_money', 'Send money to a friend or family member.', [
      collect('transfer_money', 'recipient', { description: 'who receives the money' }),
      collect('transfer_money', 'amount', { description: 'how much to send' }),
      collect('transfer_money', 'confirm', { askBeforeFilling: true }),
    ]),
    testFlow('check_balance', 'Show the balance of a bank account.', [
      collect('check_balance', 'account_type'),
    ]),
    testFlow('replace_card', 'Order a replacement for a lost or damaged card.'),
    testFlow('pattern_chitchat', 'Small talk.'),
  ]);
}

/** A tracker with the bank slots and a short past conversation. */
export function bankTracker(
  turns: readonly ['user' | 'bot', string][] = [],
  slots: Record<string, unknown> = {},
): DialogueStateTracker {
  const tracker = new DialogueStateTracker('tester', BANK_SLOTS);
  let t = 1;
  for (const [who, text] of turns) {
    tracker.update(
      who === 'user' ? userUttered({ text, timestamp: t++ }) : botUttered({ text, timestamp: t++ }),
    );
  }
  for (const [name, value] of Object.entries(slots)) {
    tracker.update(slotSet({ name, value, timestamp: t++ }));
  }
  return tracker;
}
