import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trainingTrackers } from 'src/core/dialogue/story-graph';
import { evaluateStories } from 'src/core/processor/story-evaluation';
import { readStoryFiles } from 'src/core/processor/train-dialogue';
import { storyBot } from 'src/core/testing/story-bot';
import { RASA_BOTS } from 'test/compat/shared';

const BOTS = RASA_BOTS;

const load = (bot: string, testFile: string) => storyBot(join(BOTS, bot), testFile);

describe("story evaluation of Rasa's example bots", () => {
  it('moodbot passes its test stories', () => {
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

  it('responseselectorbot passes its test stories', () => {
    const { processor, tests } = load('responseselectorbot', 'stories/test_stories.yml');
    const { outcomes } = evaluateStories(processor, tests, null);
    expect(outcomes.filter((o) => !o.correct).map((o) => [o.name, o.actions])).toEqual([]);
  });

  it("formbot: the shared test stories fail only where they predate the bot's submit rule", () => {
    const { processor, tests } = load('formbot', 'tests/test_stories.yml');
    const { outcomes } = evaluateStories(processor, tests, null);
    for (const o of outcomes) {
      const firstWrong = o.actions.find((a) => a.action !== a.predicted);
      expect(firstWrong).toMatchObject({ action: 'utter_slots_values', predicted: 'utter_submit' });
    }
  });

  it('formbot passes its test stories with utter_submit (corrected copy)', () => {
    const { processor } = load('formbot', 'tests/test_stories.yml');
    const fixture = join(__dirname, 'fixtures', 'formbot-test-stories.yml');
    const tests = trainingTrackers(
      readStoryFiles([{ text: readFileSync(fixture, 'utf8'), file: 'test_stories.yml' }]).blocks,
      processor.domain,
    );
    const { evaluation, outcomes } = evaluateStories(processor, tests, null);
    expect(outcomes.filter((o) => !o.correct).map((o) => [o.name, o.actions])).toEqual([]);
    expect(evaluation.accuracy).toBe(1);
  });
});
