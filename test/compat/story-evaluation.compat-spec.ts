import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trainingTrackers } from 'src/core/dialogue/story-graph';
import { Domain } from 'src/core/domain/domain';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { evaluateStories } from 'src/core/processor/story-evaluation';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { readConfigYaml } from 'src/core/training-data/config-reader';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';
import { RASA_BOTS } from 'test/compat/shared';

const BOTS = RASA_BOTS;

function load(bot: string, testFile: string) {
  const dir = join(BOTS, bot);
  const read = (f: string): { text: string; file: string } => ({
    text: readFileSync(join(dir, f), 'utf8'),
    file: f,
  });
  const nlu = readNluYaml(read('data/nlu.yml').text, 'data/nlu.yml').data;
  const domain = Domain.fromYaml(read('domain.yml').text).withResponses(nlu.responses);
  const config = readConfigYaml(read('config.yml').text, 'config.yml');
  const { blocks } = readStoryFiles(
    [read('data/stories.yml'), read('data/rules.yml')].filter((f) => f.text),
  );
  const { ensemble } = trainDialogue(blocks, domain, config.policies);
  const processor = new DialogueProcessor(domain, ensemble, { endpoint: null, now: () => 1 });
  const tests = trainingTrackers(readStoryFiles([read(testFile)]).blocks, domain);
  return { processor, tests };
}

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
