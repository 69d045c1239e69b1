import { type DialogueEvent } from 'src/core/events/dialogue-event';
import { type JsonObject } from 'src/core/events/event-base';
import { EXTERNAL_MESSAGE_PREFIX, IS_EXTERNAL } from 'src/core/events/user-uttered';
import { type DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';
import { Document, Scalar } from 'yaml';

/**
 * Slots a test case never checks: Rasa Pro's built-in CALM bookkeeping (the inspector hides
 * them too) and the channel metadata of the session start, which depends on the channel.
 */
const HIDDEN_SLOTS = new Set(['flow_hashes', 'dialogue_stack', 'session_started_metadata']);

/** One test case of Rasa Pro's `test_cases:` format, as plain JSON. */
export interface TestCaseJson {
  readonly test_case: string;
  readonly steps: JsonObject[];
}

/** The events the test case is written from: the latest session, after the latest restart. */
function latestConversation(tracker: DialogueStateTracker): readonly DialogueEvent[] {
  const events = tracker.eventsAfterLatestRestart();
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]?.type === 'session_started') return events.slice(i + 1);
  }
  return events;
}

function isExternal(e: DialogueEvent): boolean {
  return (
    e.type === 'user' &&
    (e.metadata[IS_EXTERNAL] === true || (e.text ?? '').startsWith(EXTERNAL_MESSAGE_PREFIX))
  );
}

/**
 * A conversation as one end-to-end test case that `parley test e2e` (and `rasa test e2e`) runs:
 * the steps in event order — `user:` for each user message with text, `utter:` for a bot message
 * sent from a response (its `metadata.utter_action`, as the inspector's E2E tab writes it),
 * `bot:` for a bot message with text and no response name, and `slot_was_set:` for the slots set
 * in the turn after the first message (consecutive ones in one step), leaving out Rasa Pro's built-in `flow_hashes` /
 * `dialogue_stack` and the channel's `session_started_metadata`. Only the latest session after
 * the latest restart is written, since a test case starts a fresh conversation. Intents triggered
 * from outside (`trigger_intent`, reminders) have no text to send and are left out.
 */
export function conversationAsTestCase(tracker: DialogueStateTracker, name: string): TestCaseJson {
  const steps: JsonObject[] = [];
  let slots: JsonObject[] | null = null;
  let userSpoke = false;
  for (const e of latestConversation(tracker)) {
    if (e.type === 'slot') {
      // Slots set before the first message belong to the session start (carried over, or set
      // by a fixture), which a fresh test conversation does not repeat.
      if (!userSpoke || HIDDEN_SLOTS.has(e.name)) continue;
      if (slots === null) {
        slots = [];
        steps.push({ slot_was_set: slots });
      }
      slots.push({ [e.name]: e.value ?? null });
      continue;
    }
    if (e.type === 'user') {
      if (isExternal(e) || !e.text || e.text.trim() === '') continue;
      steps.push({ user: e.text });
      userSpoke = true;
    } else if (e.type === 'bot') {
      const utter = e.metadata.utter_action;
      if (typeof utter === 'string' && utter !== '') steps.push({ utter });
      else if (e.text && e.text.trim() !== '') steps.push({ bot: e.text });
      else continue;
    } else {
      continue;
    }
    slots = null;
  }
  return { test_case: name, steps };
}

function quoted(text: string): Scalar {
  const node = new Scalar(text);
  node.type = Scalar.QUOTE_DOUBLE;
  return node;
}

/**
 * Test cases as the YAML file `parley test e2e` reads: `test_cases:` with user and bot texts
 * double-quoted (as the inspector's E2E tab writes them); `steps: []` when there are none.
 */
export function writeTestCases(testCases: readonly TestCaseJson[]): string {
  const content = {
    test_cases: testCases.map((t) => ({
      test_case: t.test_case,
      steps: t.steps.map((step) => {
        if (typeof step.user === 'string') return { user: quoted(step.user) };
        if (typeof step.bot === 'string') return { bot: quoted(step.bot) };
        return step;
      }),
    })),
  };
  return new Document(content).toString({ lineWidth: 0 });
}
