import {
  trainingTrackers,
  type TrackerGenerationOptions,
  type TrainingTracker,
} from 'src/core/dialogue/story-graph';
import { type Domain } from 'src/core/domain/domain';
import { PolicyEnsemble } from 'src/core/policies/policy-ensemble';
import { type ComponentConfig } from 'src/core/training-data/config-reader';
import { readStoriesYaml, type StoryBlock } from 'src/core/training-data/stories-yaml-reader';

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
 * Trains the configured policies on stories and rules (throws on invalid rules or config).
 * Stories are augmented (`augmentationFactor`, default 50, seeded) for the ML policies only.
 */
export function trainDialogue(
  blocks: readonly StoryBlock[],
  domain: Domain,
  policies: readonly ComponentConfig[] | null,
  options: TrackerGenerationOptions = {},
): { ensemble: PolicyEnsemble; trackers: TrainingTracker[] } {
  const trackers = trainingTrackers(blocks, domain, {
    ...options,
    augmentationFactor: options.augmentationFactor ?? DEFAULT_AUGMENTATION_FACTOR,
  });
  return { ensemble: PolicyEnsemble.train(policies, trackers, domain), trackers };
}
