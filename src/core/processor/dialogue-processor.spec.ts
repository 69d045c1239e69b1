import { botMessageOf } from 'src/core/actions/nlg';
import { CollectingOutputChannel } from 'src/core/channels/output-channel';
import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

const domain = Domain.fromObject({
  intents: ['greet', 'shout', 'ask'],
  responses: { utter_a: [{ text: 'a' }], utter_default: [{ text: 'sorry?' }] },
  actions: ['action_remote', 'action_hangup'],
});

const STORIES = [
  'stories:',
  '- story: shouting',
  '  steps:',
  '  - intent: shout',
  ...Array.from({ length: 14 }, () => '  - action: utter_a'),
  '- story: remote',
  '  steps:',
  '  - intent: ask',
  '  - action: action_remote',
  '',
].join('\n');

function processor(warnings: string[] = []): DialogueProcessor {
  const { blocks } = readStoryFiles([{ text: STORIES, file: 'stories.yml' }]);
  const { ensemble } = trainDialogue(blocks, domain, [
    { name: 'TEDPolicy', max_history: 1 },
    { name: 'MemoizationPolicy' },
    { name: 'RulePolicy' },
  ]);
  let t = 100;
  return new DialogueProcessor(domain, ensemble, {
    endpoint: null,
    maxPredictions: 10,
    now: () => (t += 0.001),
    warn: (m) => warnings.push(m),
  });
}

function fresh(id: string): DialogueStateTracker {
  const tracker = new DialogueStateTracker(id, domain.slots);
  tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
  return tracker;
}

const message = (intent: string) => ({
  text: `/${intent}`,
  parseData: { intent: { name: intent, confidence: 1 }, entities: [] },
  inputChannel: 'test',
  messageId: null,
});

describe('DialogueProcessor', () => {
  it('stops a looping prediction with the circuit breaker after MAX_NUMBER_OF_PREDICTIONS actions', async () => {
    const warnings: string[] = [];
    const p = processor(warnings);
    const tracker = fresh('loop');
    await p.handleUserMessage(tracker, message('shout'), null);
    const actions = tracker.events
      .filter((e) => e.type === 'action')
      .map((e) => (e.type === 'action' ? e.name : ''));
    // The listen before the message, then exactly 10 predicted actions: all utter_a.
    expect(actions.slice(1)).toEqual(Array.from({ length: 10 }, () => 'utter_a'));
    expect(warnings.some((w) => w.startsWith('Circuit breaker tripped'))).toBe(true);
  });

  it('a custom action without an action server is logged as run without events and the turn goes on', async () => {
    const warnings: string[] = [];
    const p = processor(warnings);
    const tracker = fresh('remote');
    await p.handleUserMessage(tracker, message('ask'), null);
    const actions = tracker.events
      .filter((e) => e.type === 'action')
      .map((e) => (e.type === 'action' ? e.name : ''));
    expect(actions[1]).toBe('action_remote');
    expect(actions.at(-1)).toBe('action_listen');
    expect(warnings.some((w) => w.includes('no endpoint is configured'))).toBe(true);
  });

  it('executing an unknown action is a DIALOGUE.UNKNOWN_ACTION error', async () => {
    const p = processor();
    const tracker = new DialogueStateTracker('x', domain.slots);
    await expect(p.executeAction(tracker, 'utter_nope', null, null, null)).rejects.toMatchObject({
      code: 'DIALOGUE.UNKNOWN_ACTION',
    });
  });

  it('action_hangup (listed in the domain) sends {custom: {hangup: true}} as its bot message', async () => {
    const p = processor();
    const tracker = fresh('hangup');
    await p.executeAction(tracker, 'action_hangup', null, null, 'genesys');
    const bots = tracker.events.filter((e) => e.type === 'bot');
    expect(bots).toHaveLength(1);
    const out = new CollectingOutputChannel();
    for (const bot of bots) {
      if (bot.type === 'bot') await out.sendResponse('hangup', botMessageOf(bot));
    }
    expect(out.messages).toEqual([{ recipient_id: 'hangup', custom: { hangup: true } }]);
    const names = tracker.events.map((e) => (e.type === 'action' ? e.name : e.type));
    expect(names).toContain('action_hangup');
  });
});
