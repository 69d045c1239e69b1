import { join } from 'node:path';
import { trainingTrackers } from 'src/core/dialogue/story-graph';
import { type JsonObject } from 'src/core/events/event-base';
import { evaluateStories } from 'src/core/processor/story-evaluation';
import { readStoryFiles } from 'src/core/processor/train-dialogue';
import { storyBot } from 'src/core/testing/story-bot';

/** The test bots (test/fixtures). */
const BOTS = join(__dirname, '..', '..', '..', 'test', 'fixtures');

const load = (bot: string, testFile: string) => storyBot(join(BOTS, bot), testFile);

describe('story evaluation of the test bots', () => {
  it('the mood bot passes its test stories', () => {
    const { processor, tests } = load('moodbot', 'tests/test_stories.yml');
    const { evaluation, outcomes } = evaluateStories(processor, tests, null);
    const failed = outcomes.filter((o) => !o.correct).map((o) => [o.name, o.actions]);
    expect(failed).toEqual([]);
    expect(evaluation.report.conversation_accuracy).toEqual({
      accuracy: 1,
      correct: 7,
      with_warnings: 0,
      total: 7,
    });
    expect(evaluation.in_training_data_fraction).toBe(1);
  });

  it('the response-selector bot passes its test stories', () => {
    const { processor, tests } = load('responseselectorbot', 'tests/test_stories.yml');
    const { outcomes } = evaluateStories(processor, tests, null);
    expect(outcomes.filter((o) => !o.correct).map((o) => [o.name, o.actions])).toEqual([]);
  });

  it('the form bot passes its test stories', () => {
    const { processor, tests } = load('formbot', 'tests/test_stories.yml');
    const { evaluation, outcomes } = evaluateStories(processor, tests, null);
    expect(outcomes.filter((o) => !o.correct).map((o) => [o.name, o.actions])).toEqual([]);
    expect(evaluation.accuracy).toBe(1);
  });

  it('a test story that breaks a rule fails at the first wrong action', () => {
    const { processor } = load('formbot', 'tests/test_stories.yml');
    const text = [
      'stories:',
      '- story: summary before submit',
      '  steps:',
      '  - intent: request_booking',
      '  - action: booking_form',
      '  - active_loop: booking_form',
      '  - active_loop: null',
      '  - action: utter_slots_values',
      '  - action: utter_submit',
      '',
    ].join('\n');
    const tests = trainingTrackers(
      readStoryFiles([{ text, file: 'test_stories.yml' }]).blocks,
      processor.domain,
    );
    const { outcomes } = evaluateStories(processor, tests, null);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]?.correct).toBe(false);
    const firstWrong = outcomes[0]?.actions.find((a) => a.action !== a.predicted);
    expect(firstWrong).toMatchObject({ action: 'utter_slots_values', predicted: 'utter_submit' });
  });

  describe('end to end (user texts parsed)', () => {
    const { processor, tests } = load('formbot', 'tests/test_stories.yml');
    /** A parser that knows each test text's intent and finds `double` as the given entity. */
    const parser =
      (entity: Record<string, unknown> | null) =>
      (text: string): JsonObject => {
        const intents: Record<string, string> = {
          hello: 'greet',
          hi: 'greet',
          'good morning': 'greet',
          'thank you': 'thankyou',
          thanks: 'thankyou',
          'many thanks': 'thankyou',
          'tell me a joke': 'chitchat',
          'a double room': 'inform',
        };
        const trimmed = text.trim();
        const name = intents[trimmed] ?? 'request_booking';
        const at = trimmed.indexOf('double');
        const entities =
          entity !== null && at >= 0
            ? [{ start: at, end: at + 6, extractor: 'DIETClassifier', ...entity }]
            : [];
        return { text, intent: { name, confidence: 0.9 }, entities };
      };

    it('entities as annotated pass, and count in the report with the intents', () => {
      const { evaluation, outcomes } = evaluateStories(
        processor,
        tests,
        parser({ entity: 'room_type', value: 'double' }),
      );
      expect(outcomes.filter((o) => !o.correct).map((o) => o.name)).toEqual([]);
      expect(evaluation.is_end_to_end_evaluation).toBe(true);
      const report = evaluation.report as Record<string, { support?: number }>;
      expect(report['[double](room_type)']?.support).toBeGreaterThan(0);
      expect(report['greet']?.support).toBeGreaterThan(0);
      expect(evaluation.accuracy).toBe(1);
    });

    it('a missing, extra or different entity fails the story, not the next action', () => {
      for (const [entity, label] of [
        [null, 'None'],
        [{ entity: 'number', value: 2 }, '[double]{"entity": "number", "value": "2"}'],
      ] as const) {
        const { evaluation, outcomes } = evaluateStories(processor, tests, parser(entity));
        const named = outcomes.find((o) => o.name === 'book a room, naming the room type');
        expect(named?.correct).toBe(false);
        // The story's own annotation stays on the tracker: the actions are still right.
        expect(named?.actions.every((a) => a.action === a.predicted)).toBe(true);
        const [text, gold, predicted, marked] = named?.nluErrors[0] ?? [];
        expect([text?.trim(), gold, predicted]).toEqual(['a double room', 'inform', 'inform']);
        expect(marked?.trim()).toBe(entity === null ? 'a double room' : `a ${label} room`);
        expect(evaluation.accuracy).toBeLessThan(1);
        const report = evaluation.report as Record<string, unknown>;
        // The annotated entity is in the report, never found.
        expect(report['[double](room_type)']).toMatchObject({ support: 1, recall: 0 });
      }
    });
  });
});
