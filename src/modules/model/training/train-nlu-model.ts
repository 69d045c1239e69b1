import { stat } from 'node:fs/promises';
import { type Domain } from 'src/core';
import { type FlowsList } from 'src/core/flows/flows-list';
import {
  FLOWS_ARCHIVE_FILE,
  storedFlowsJson,
  trainFlows,
  type FlowsSource,
} from 'src/core/flows/flows-model';
import {
  canonicalJson,
  fingerprint,
  scanModelDirectory,
  writeModelArchive,
} from 'src/core/model-archive';
import { trainNlu, type ProgressCallback } from 'src/core/nlu';
import { policyConfigWarnings } from 'src/core/policies/policy-config';
import { DEFAULT_AUGMENTATION_FACTOR, trainDialogue } from 'src/core/processor/train-dialogue';
import { type NluTrainingData, type ProjectConfig } from 'src/core/training-data';
import { type StoryBlock } from 'src/core/training-data/stories-yaml-reader';
import { MINIMUM_COMPATIBLE_VERSION, PARLEY_VERSION } from 'src/platform/config/version';

/** Everything needed to train and package an NLU model, already read and validated. */
export interface TrainNluModelInput {
  /** NLU data; null (or without examples) trains a dialogue-only model. */
  readonly data: NluTrainingData | null;
  /** Stories and rules; empty or absent trains an NLU-only model. */
  readonly stories?: readonly StoryBlock[];
  readonly config: ProjectConfig;
  /** Text stored as `config.yml` in the archive (and fingerprinted). */
  readonly configText: string;
  readonly domain: Domain;
  /** Text stored as `domain.yml` in the archive (and fingerprinted). */
  readonly domainText: string;
  readonly outDir: string;
  readonly fixedModelName?: string;
  /** Train even when `outDir` already holds a model with the same fingerprint. */
  readonly force?: boolean;
  /** Training progress; default: a `log` line every 10 % of each pipeline stage. */
  readonly onProgress?: ProgressCallback;
  /** Training threads (`num_threads`); default: trainNlu's. */
  readonly threads?: number;
  /** Story augmentation factor (Rasa's `--augmentation`); default 50. */
  readonly augmentation?: number;
  /** Flows files (Rasa Pro CALM); absent or empty: an assistant without flows. */
  readonly flows?: readonly FlowsSource[];
}

export interface TrainNluModelResult {
  /** Path of the written archive, or of the existing one when training was skipped. */
  readonly path: string;
  readonly skipped: boolean;
}

/**
 * Shared by `parley train` and `POST /model/train`: fingerprints the inputs, skips training when
 * the newest model in `outDir` has the same fingerprint (unless `force`), else trains the NLU
 * pipeline (Python-only components substituted) and writes a model archive to `outDir`.
 */
export async function trainNluModel(
  input: TrainNluModelInput,
  log: (line: string) => void,
): Promise<TrainNluModelResult> {
  const { data, config, configText, outDir } = input;
  let { domain, domainText } = input;
  const stories = input.stories ?? [];
  const flowSources = input.flows ?? [];
  const augmentation = Math.max(0, input.augmentation ?? DEFAULT_AUGMENTATION_FACTOR);
  const hasNlu = data !== null && data.examples.length > 0;
  const print = fingerprint(
    {
      nlu: canonicalJson(data ?? {}),
      config: configText,
      domain: domainText,
      ...(stories.length > 0
        ? { core: canonicalJson(stories), augmentation: String(augmentation) }
        : {}),
      ...(flowSources.length > 0 ? { flows: canonicalJson(flowSources) } : {}),
    },
    PARLEY_VERSION,
  );
  if (!input.force) {
    const existing = await sameFingerprint(outDir, print);
    if (existing !== null) {
      log(
        `Nothing changed: ${existing} was trained on the same data, domain and config. Use --force to train anyway.`,
      );
      return { path: existing, skipped: true };
    }
  }

  // Flows (Rasa Pro CALM): read and checked against the domain with what they add to it
  // (pattern responses and slots, flow actions), which the stored domain then holds.
  let flows: FlowsList | null = null;
  if (flowSources.length > 0) {
    const trained = trainFlows(flowSources, domainText);
    for (const w of trained.warnings) log(`warning: ${w}`);
    flows = trained.flows;
    domain = trained.domain;
    domainText = trained.domainText;
    log(`Read ${flows.userFlows.length} flows (and the default patterns).`);
  }
  const files: Record<string, string> = { 'domain.yml': domainText, 'config.yml': configText };
  if (flows !== null) files[FLOWS_ARCHIVE_FILE] = storedFlowsJson(flowSources, config.pipeline);
  let components: string[] = [];
  if (hasNlu) {
    log(`Training NLU on ${data.examples.length} examples...`);
    let lastReported = '';
    const nlu = await trainNlu(data, config, {
      substituteUnsupported: true,
      responses: domain.responses,
      ...(input.threads === undefined ? {} : { threads: input.threads }),
      onProgress:
        input.onProgress ??
        ((stage, fraction) => {
          const pct = Math.floor(fraction * 10) * 10;
          const key = `${stage}:${pct}`;
          if (key === lastReported) return;
          lastReported = key;
          log(`  ${stage} ${pct}%`);
        }),
    });
    for (const w of nlu.warnings) log(`warning: ${w}`);
    files['nlu/model.json'] = JSON.stringify(nlu.toJSON());
    // What users say, for speech recognisers that need expected phrases (the voice connector's
    // offline grammar): the example texts without annotations, once each.
    files['nlu/phrases.json'] = JSON.stringify([...new Set(data.examples.map((e) => e.text))]);
    components = [...nlu.componentNames];
  }
  if (stories.length > 0 || flows !== null) {
    const responses = data?.responses ?? {};
    const coreDomain = domain.withResponses(responses);
    // A flows-only assistant without configured policies gets the FlowPolicy alone.
    const policies =
      flows !== null && stories.length === 0 && (config.policies ?? []).length === 0
        ? [{ name: 'FlowPolicy' }]
        : config.policies;
    log(
      `Training dialogue policies on ${stories.length} stories and rules${flows === null ? '' : ` and ${flows.userFlows.length} flows`}...`,
    );
    for (const w of policyConfigWarnings(policies)) log(`warning: ${w}`);
    if (flows !== null && !(policies ?? []).some((p) => p.name === 'FlowPolicy')) {
      log(
        `warning: the data has flows (${flowSources.map((f) => f.path).join(', ')}) but config.yml lists no FlowPolicy: the flows are trained but never run. Add \`- name: FlowPolicy\` to the policies.`,
      );
    }
    const { ensemble } = trainDialogue(
      stories,
      coreDomain,
      policies,
      { augmentationFactor: augmentation },
      flows ?? undefined,
    );
    files['core/policies.json'] = JSON.stringify({ ...ensemble.toJSON(), responses });
    components.push(...ensemble.policies.map((p) => p.type));
  }
  if (!hasNlu && stories.length === 0 && flows === null) {
    throw new Error('no training data: neither NLU examples nor stories or rules were found');
  }

  const written = await writeModelArchive({
    outDir,
    ...(input.fixedModelName === undefined ? {} : { fixedModelName: input.fixedModelName }),
    files,
    fingerprint: print,
    parleyVersion: PARLEY_VERSION,
    minimumCompatibleVersion: MINIMUM_COMPATIBLE_VERSION,
    assistantId: config.assistantId,
    components,
  });
  log(`Your Parley model is trained and saved at '${written.path}'.`);
  return { path: written.path, skipped: false };
}

async function sameFingerprint(outDir: string, print: string): Promise<string | null> {
  try {
    const info = await stat(outDir);
    if (!info.isDirectory()) return null;
  } catch {
    return null;
  }
  const scan = await scanModelDirectory(outDir);
  if (scan.latest !== null && scan.latest.manifest.fingerprint === print) return scan.latest.path;
  return null;
}
