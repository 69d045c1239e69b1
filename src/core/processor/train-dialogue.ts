import {
  trainingTrackers,
  type TrackerGenerationOptions,
  type TrainingTracker,
} from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import { DialogueError } from 'src/core/errors/dialogue-error';
import { FlowsList } from 'src/core/flows/flows-list';
import { PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { readStoriesYaml, type StoryBlock } from 'src/core/training-data/stories-yaml-reader';
import { unknownActions, unknownActionsMessage } from 'src/core/validation/project-validator';

/** Reads stories and rules of several files. */
export function readStoryFiles(files: readonly { text: string; file: string }[]): {
  blocks: StoryBlock[];
  warnings: string[];
} {
  const blocks: StoryBlock[] = [];
  const warnings: string[] = [];
  for (const f of files) {
    const r = readStoriesYaml(f.text, f.file);
    blocks.push(...r.blocks);
    warnings.push(...r.warnings);
  }
  return { blocks, warnings };
}

/** Rasa's default `--augmentation` of `rasa train`. */
export const DEFAULT_AUGMENTATION_FACTOR = 50;

/**
 * Trains the configured policies on stories and rules (throws on invalid rules or config, and on
 * actions the domain does not list).
 * Stories are augmented (`augmentationFactor`, default 50, seeded) for the ML policies only.
 */
export function trainDialogue(
  blocks: readonly StoryBlock[],
  domain: Domain,
  policies: readonly ComponentConfig[] | null,
  options: TrackerGenerationOptions = {},
  flows: FlowsList = FlowsList.empty(),
): { ensemble: PolicyEnsemble; trackers: TrainingTracker[] } {
  const trackers = trainingTrackers(blocks, domain, {
    ...options,
    augmentationFactor: options.augmentationFactor ?? DEFAULT_AUGMENTATION_FACTOR,
  });
  const ensemble = PolicyEnsemble.train(policies, trackers, domain, flows);
  // Rasa's policies look every action up in the domain while featurising
  // (`Domain.index_for_action` → ActionNotFoundException): such data never trains. Checked
  // after the policies so their own findings (contradicting rules) come first, as in Rasa.
  const unknown = unknownActions(blocks, domain);
  if (unknown.length > 0) {
    throw new DialogueError('TRAINING_DATA.INVALID', unknownActionsMessage(unknown), {
      actions: unknown.map((u) => u.name),
    });
  }
  return { ensemble, trackers };
}
