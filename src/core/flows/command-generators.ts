import { type ComponentConfig } from 'src/core/training-data/config-reader';

/**
 * The command generators of Rasa Pro's CALM: configured in `pipeline:` like NLU components, but
 * they run in the dialogue turn (they read the conversation), not in the NLU pipeline. The NLU
 * pipeline leaves them out; the model keeps their config for the turn.
 */
export const NLU_COMMAND_ADAPTER = 'NLUCommandAdapter';
export const LLM_COMMAND_GENERATORS = [
  'LLMCommandGenerator',
  'SingleStepLLMCommandGenerator',
  'CompactLLMCommandGenerator',
  'MultiStepLLMCommandGenerator',
  'SearchReadyLLMCommandGenerator',
] as const;

export function isCommandGenerator(name: string): boolean {
  return (
    name === NLU_COMMAND_ADAPTER || (LLM_COMMAND_GENERATORS as readonly string[]).includes(name)
  );
}

/** The command generators of a pipeline, in order. */
export function commandGeneratorsOf(
  pipeline: readonly ComponentConfig[] | null | undefined,
): ComponentConfig[] {
  return (pipeline ?? []).filter((c) => isCommandGenerator(c.name));
}
