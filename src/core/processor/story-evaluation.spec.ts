import { join } from 'node:path';
import { trainingTrackers } from 'src/core/dialogue/story-graph';
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
});
