import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trainingTrackers, type TrainingTracker } from 'src/core/dialogue/story-graph';
import { Domain } from 'src/core/domain/domain';
import { DialogueProcessor } from 'src/core/processor/dialogue-processor';
import { readStoryFiles, trainDialogue } from 'src/core/processor/train-dialogue';
import { readConfigYaml } from 'src/core/training-data/config-reader';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';

/**
 * A bot folder laid out as Rasa's (domain.yml, config.yml, data/nlu.yml, data/stories.yml,
 * data/rules.yml), its policies trained, with the test stories of `testFile` (relative to the
 * folder) as conversations to evaluate: for story-evaluation specs.
 */
export function storyBot(
  dir: string,
  testFile: string,
): { processor: DialogueProcessor; tests: TrainingTracker[] } {
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
