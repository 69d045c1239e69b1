import { Domain } from 'src/core/domain/domain';
import { type FlowsSource } from 'src/core/flows/flows-model';
import { readFlowsYaml } from 'src/core/flows/flows-reader';
import { readConfigYaml, type ProjectConfig } from 'src/core/training-data/config-reader';
import {
  mergeNluTrainingData,
  type NluTrainingData,
} from 'src/core/training-data/nlu-training-data';
import { readNluYaml } from 'src/core/training-data/nlu-yaml-reader';
import { readStoriesYaml, type StoryBlock } from 'src/core/training-data/stories-yaml-reader';
import { entriesOf, parseYamlSource, yamlError } from 'src/core/training-data/yaml-source';
import { isMap, isScalar, stringify } from 'yaml';

const DOMAIN_KEYS = new Set([
  'version',
  'intents',
  'entities',
  'slots',
  'responses',
  'actions',
  'forms',
  'session_config',
  'e2e_actions',
]);
const CONFIG_KEYS = new Set(['recipe', 'language', 'assistant_id', 'pipeline', 'policies']);
const NLU_KEYS = new Set(['version', 'nlu', 'responses']);
/**
 * Keys outside the domain, config and NLU parts: stories and rules are read by the stories
 * reader, flows (Rasa Pro CALM) by the flows reader.
 */
export const DIALOGUE_KEYS = ['stories', 'rules', 'flows'] as const;
const FLOWS_KEYS = new Set(['flows']);
/** Deprecated body keys: accepted and ignored (query parameters decide). */
export const DEPRECATED_KEYS = ['force', 'save_to_default_model_directory'] as const;
const KNOWN_KEYS = new Set<string>([
  ...DOMAIN_KEYS,
  ...CONFIG_KEYS,
  ...NLU_KEYS,
  ...DIALOGUE_KEYS,
  ...DEPRECATED_KEYS,
]);

/** The one-document training body of `POST /model/train`, split into its parts. */
export interface TrainRequest {
  readonly domain: Domain;
  /** The domain part as YAML (stored as `domain.yml`). */
  readonly domainText: string;
  readonly config: ProjectConfig;
  /** The config part as YAML (stored as `config.yml`). */
  readonly configText: string;
  readonly nlu: NluTrainingData;
  /** Stories and rules (trained into dialogue policies). */
  readonly stories: readonly StoryBlock[];
  /**
   * The `flows` part (Rasa Pro CALM) as one flows source named after the body, with its line
   * numbers; empty without flows.
   */
  readonly flows: readonly FlowsSource[];
  readonly warnings: readonly string[];
}

/**
 * Keeps only the top-level entries named in `keep`: the others are overwritten with spaces, so
 * line numbers in error messages still point into the request body. A flow-style top level
 * (`{...}`) is re-serialized instead (line numbers are then approximate).
 */
function partText(text: string, root: unknown, keep: ReadonlySet<string>): string {
  if (!isMap(root)) return text;
  if (root.flow) {
    const picked: Record<string, unknown> = {};
    for (const pair of root.items) {
      const key = isScalar(pair.key) ? pair.key.value : undefined;
      if (typeof key === 'string' && keep.has(key)) {
        picked[key] = (pair.value as { toJSON?: () => unknown } | null)?.toJSON?.() ?? pair.value;
      }
    }
    return stringify(picked);
  }
  const chars = text.split('');
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key === 'string' && keep.has(key)) continue;
    const keyRange = (pair.key as { range?: [number, number, number] } | null)?.range;
    const valueRange = (pair.value as { range?: [number, number, number] } | null)?.range;
    if (!keyRange) continue;
    const end = valueRange ? valueRange[2] : keyRange[2];
    for (let i = keyRange[0]; i < end && i < chars.length; i++) {
      if (chars[i] !== '\n' && chars[i] !== '\r') chars[i] = ' ';
    }
  }
  return chars.join('');
}

/** The keys of `keep` present in the plain document, as clean YAML for the archive. */
function cleanYaml(plain: Record<string, unknown>, keep: ReadonlySet<string>): string {
  const picked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain)) if (keep.has(k) && k !== 'version') picked[k] = v;
  return Object.keys(picked).length === 0 ? '' : stringify(picked);
}

/**
 * Reads the body of `POST /model/train`: one YAML document holding domain keys, config keys,
 * NLU data, stories and rules, and flows. Syntax errors, YAML bombs (alias cap) and invalid parts throw DialogueErrors naming
 * `file` and the line. Throws `TRAINING_DATA.INVALID` when there is nothing to train on.
 */
export function readTrainRequest(text: string, file = 'request body'): TrainRequest {
  const source = parseYamlSource(text, file);
  const root = source.doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    yamlError(source, undefined, 'the training data is empty');
  }
  if (!isMap(root)) yamlError(source, 1, 'the training data must be a mapping of top-level keys');
  const warnings: string[] = [];
  for (const entry of entriesOf(source, root)) {
    if ((DIALOGUE_KEYS as readonly string[]).includes(entry.key)) continue;
    else if ((DEPRECATED_KEYS as readonly string[]).includes(entry.key)) {
      warnings.push(`${file}:${entry.keyLine ?? '?'}: '${entry.key}' is deprecated and ignored`);
    } else if (!KNOWN_KEYS.has(entry.key)) {
      warnings.push(`${file}:${entry.keyLine ?? '?'}: unknown key '${entry.key}' is ignored`);
    }
  }
  const plain = source.doc.toJS({ maxAliasCount: 50 }) as Record<string, unknown>;

  const config = readConfigYaml(partText(text, root, CONFIG_KEYS), file);
  const domain = Domain.fromYaml(partText(text, root, DOMAIN_KEYS), file);
  const nluRead = readNluYaml(partText(text, root, NLU_KEYS), file);
  warnings.push(...nluRead.warnings);
  const nlu = mergeNluTrainingData([nluRead.data]);
  const storiesRead = readStoriesYaml(text, file);
  warnings.push(...storiesRead.warnings);
  // Read here so that a malformed `flows` part is a 400 naming the body's line before training.
  // The other parts' blanked lines are emptied (the archive keeps this text).
  const flowsText = partText(text, root, FLOWS_KEYS).replace(/^ +$/gm, '');
  const flows = readFlowsYaml(flowsText, file).length > 0 ? [{ path: file, text: flowsText }] : [];
  if (nlu.examples.length === 0 && storiesRead.blocks.length === 0 && flows.length === 0) {
    yamlError(
      source,
      undefined,
      "no training data found: neither NLU examples (the 'nlu' key) nor 'stories', 'rules' or 'flows'",
    );
  }
  return {
    domain,
    domainText: cleanYaml(plain, DOMAIN_KEYS),
    config,
    configText: cleanYaml(plain, CONFIG_KEYS),
    nlu,
    stories: storiesRead.blocks,
    flows,
    warnings,
  };
}
