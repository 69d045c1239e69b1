import { Domain } from 'src/core/domain/domain';
import { actionExecuted } from 'src/core/events/action-executed';
import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

const domain = Domain.fromObject({
  intents: ['greet', 'goodbye'],
  responses: {
    utter_greet: [{ text: 'Hello!' }],
    utter_goodbye: [{ text: 'Bye!' }],
    utter_ask_rephrase: [{ text: 'Can you rephrase?' }],
    utter_default: [{ text: 'Sorry, I cannot help.' }],
  },
});

// With a story, MemoizationPolicy predicts `action_listen` at a conversation's start — where
// `action_default_fallback`'s revert leaves an unclear first message.
const RULES = `
stories:
- story: greet
  steps:
  - intent: greet
  - action: utter_greet
rules:
- rule: greet
  steps:
  - intent: greet
  - action: utter_greet
- rule: goodbye
  steps:
  - intent: goodbye
  - action: utter_goodbye
- rule: two-stage fallback
  steps:
  - intent: nlu_fallback
  - action: action_two_stage_fallback
  - active_loop: action_two_stage_fallback
`;

function processor(): DialogueProcessor {
  const { blocks } = readStoryFiles([{ text: RULES, file: 'rules.yml' }]);
  const { ensemble } = trainDialogue(blocks, domain, [
    { name: 'MemoizationPolicy' },
    { name: 'RulePolicy' },
  ]);
  let t = 100;
  return new DialogueProcessor(domain, ensemble, { endpoint: null, now: () => (t += 0.001) });
}

/** A parse result: `nlu_fallback` (low confidence) ranks the other intents after it. */
function parsed(intent: string, ranking: [string, number][] = []): JsonObject {
  const confidence = intent === 'nlu_fallback' ? 0.3 : 1;
  return {
    intent: { name: intent, confidence },
    entities: [],
    intent_ranking: [
      { name: intent, confidence },
      ...ranking.map(([name, c]) => ({ name, confidence: c })),
    ],
  };
}

const LOW = (): JsonObject =>
  parsed('nlu_fallback', [
    ['greet', 0.25],
    ['goodbye', 0.1],
  ]);

describe('action_two_stage_fallback', () => {
  const p = processor();
  let tracker: DialogueStateTracker;
  let seen = 0;

  beforeEach(() => {
    tracker = new DialogueStateTracker('ann', domain.slots);
    tracker.update(actionExecuted({ name: 'action_listen', timestamp: 1 }));
    seen = tracker.events.length;
  });

  /** Sends a message; returns the events it added. */
  const say = async (text: string, parseData: JsonObject): Promise<DialogueEvent[]> => {
    await p.handleUserMessage(
      tracker,
      { text, parseData, inputChannel: 'rest', messageId: null },
      'rest',
    );
    const added = tracker.events.slice(seen);
    seen = tracker.events.length;
    return added;
  };
  const texts = (events: DialogueEvent[]) =>
    events.flatMap((e) => (e.type === 'bot' ? [e.text] : []));
  const shape = (events: DialogueEvent[]) =>
    events.map((e) =>
      e.type === 'action'
        ? `action:${e.name}`
        : e.type === 'active_loop'
          ? `active_loop:${e.name}`
          : e.type === 'user'
            ? `user:${String(e.intent.name)}@${String(e.parseData.intent && (e.parseData.intent as JsonObject).confidence)}`
            : e.type,
    );

  it('asks to affirm the runner-up intent; affirming replays it and the dialogue goes on', async () => {
    const first = await say('helo', LOW());
    expect(shape(first)).toEqual([
      'user:nlu_fallback@0.3',
      'action:action_two_stage_fallback',
      'active_loop:action_two_stage_fallback',
      'bot',
      'action:action_listen',
    ]);
    const ask = first.find((e) => e.type === 'bot');
    expect(ask).toMatchObject({
      text: "Did you mean 'greet'?",
      data: {
        buttons: [
          { title: 'Yes', payload: '/greet' },
          { title: 'No', payload: '/out_of_scope' },
        ],
      },
      metadata: { utter_action: 'action_default_ask_affirmation' },
    });

    const second = await say('/greet', parsed('greet'));
    expect(shape(second)).toEqual([
      'user:greet@1',
      'action:action_two_stage_fallback',
      'active_loop:null',
      'rewind',
      'action:action_listen',
      'user:greet@1',
      'action:utter_greet',
      'bot',
      'action:action_listen',
    ]);
    expect(texts(second)).toEqual(['Hello!']);
    expect(tracker.activeLoopName).toBeNull();
    // The fallback turns are gone from the applied history: it reads as if "/greet" came first.
    const applied = tracker.appliedEvents().filter((e) => e.type === 'user' || e.type === 'action');
    expect(shape(applied)).toEqual([
      'action:action_listen',
      'user:greet@1',
      'action:utter_greet',
      'action:action_listen',
    ]);
  });

  it('deny → rephrase; a clear rephrase is replayed with confidence 1.0', async () => {
    await say('helo', LOW());
    const denied = await say('/out_of_scope', parsed('out_of_scope'));
    expect(texts(denied)).toEqual(['Can you rephrase?']);
    expect(tracker.activeLoopName).toBe('action_two_stage_fallback');
    const rephrased = await say('bye now', parsed('goodbye'));
    expect(texts(rephrased)).toEqual(['Bye!']);
    expect(tracker.activeLoopName).toBeNull();
  });

  it('deny, unclear rephrase, deny again → action_default_fallback (utter_default, rewind)', async () => {
    await say('helo', LOW());
    await say('/out_of_scope', parsed('out_of_scope'));
    const again = await say('hmm', LOW());
    expect(texts(again)).toEqual(["Did you mean 'greet'?"]);
    const giveUp = await say('/out_of_scope', parsed('out_of_scope'));
    expect(shape(giveUp)).toEqual([
      'user:out_of_scope@1',
      'action:action_two_stage_fallback',
      'active_loop:null',
      'bot',
      'rewind',
      'action:action_listen',
    ]);
    expect(texts(giveUp)).toEqual(['Sorry, I cannot help.']);
    expect(tracker.activeLoopName).toBeNull();
    // Everything since the first unclear message is reverted.
    expect(tracker.appliedEvents().filter((e) => e.type === 'user')).toHaveLength(0);
  });

  it('two unclear messages in a row give up at once', async () => {
    await say('helo', LOW());
    const second = await say('hmm', LOW());
    expect(texts(second)).toEqual(['Sorry, I cannot help.']);
    expect(tracker.activeLoopName).toBeNull();
  });
});
