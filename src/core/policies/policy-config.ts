import { type ComponentConfig } from 'src/core/training-data/config-reader';

/** The config keys each supported policy reads; every other key has no effect. */
const HONOURED_KEYS: Readonly<Record<string, readonly string[]>> = {
  MemoizationPolicy: ['max_history', 'priority'],
  AugmentedMemoizationPolicy: ['max_history', 'priority'],
  RulePolicy: [
    'core_fallback_threshold',
    'core_fallback_action_name',
    'enable_fallback_prediction',
    'restrict_rules',
    'check_for_contradictions',
    'priority',
  ],
  TEDPolicy: ['max_history', 'epochs', 'priority'],
  UnexpecTEDIntentPolicy: ['priority'],
};

/**
 * Warnings for the policies of a user's config.yml: every key a policy does not read (Parley's
 * TEDPolicy is a linear model over the dialogue states, so Rasa's transformer settings have no
 * effect), and UnexpecTEDIntentPolicy, which is accepted so Rasa configs train but never
 * predicts `action_unlikely_intent`. Unknown policy names are errors elsewhere.
 */
export function policyConfigWarnings(configs: readonly ComponentConfig[] | null): string[] {
  const warnings: string[] = [];
  for (const config of configs ?? []) {
    const honoured = HONOURED_KEYS[config.name];
    if (honoured === undefined) continue;
    if (config.name === 'UnexpecTEDIntentPolicy') {
      warnings.push(
        'config.yml: UnexpecTEDIntentPolicy is accepted but never predicts ' +
          "'action_unlikely_intent' in Parley; remove it to silence this warning.",
      );
    }
    const ignored = Object.keys(config).filter((k) => k !== 'name' && !honoured.includes(k));
    if (ignored.length > 0) {
      warnings.push(
        `config.yml: ${config.name} ignores ${ignored.map((k) => `'${k}'`).join(', ')} ` +
          `(it reads only ${honoured.map((k) => `'${k}'`).join(', ')}).`,
      );
    }
  }
  return warnings;
}
