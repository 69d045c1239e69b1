import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Domain, readDomainPath } from 'src/core';
import { type FlowsSource } from 'src/core/flows/flows-model';
import {
  mergeNluTrainingData,
  readConfigYaml,
  readNluYaml,
  type NluTrainingData,
} from 'src/core/training-data';
import {
  hasStoriesOrRules,
  readStoriesYaml,
  type StoryBlock,
} from 'src/core/training-data/stories-yaml-reader';
import { uploadTrainedModel } from 'src/modules/model/sources/upload';
import { trainNluModel } from 'src/modules/model/training/train-nlu-model';
import { trainProgress } from './train-progress';

/** Options of `parley train`, as commander hands them over. */
export interface TrainOptions {
  data?: string[];
  domain?: string;
  config?: string;
  out?: string;
  fixedModelName?: string;
  force?: boolean;
  /** Story augmentation factor for the ML policies (Rasa's `--augmentation`, default 50). */
  augmentation?: number;
  /** Upload the trained archive: aws, gcs, azure or <module>.<class>; `out` is then the bucket path. */
  remoteStorage?: string;
}

export interface TrainResult {
  /** Path of the written archive, or of the existing one when training was skipped. */
  readonly path: string;
  readonly skipped: boolean;
  /** Object key in remote storage when `--remote-storage` was given. */
  readonly remoteKey?: string;
}

const YAML_EXTENSIONS = new Set(['.yml', '.yaml']);

/** Every YAML file under the given files and directories, sorted, each once. */
async function yamlFiles(paths: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  const walk = async (path: string, explicit: boolean): Promise<void> => {
    const info = await stat(path);
    if (info.isDirectory()) {
      const entries = (await readdir(path)).sort();
      for (const entry of entries) {
        if (!entry.startsWith('.')) await walk(join(path, entry), false);
      }
    } else if (explicit || YAML_EXTENSIONS.has(extname(path).toLowerCase())) {
      out.add(path);
    }
  };
  for (const p of paths) await walk(p, true);
  return [...out].sort();
}

function hasNluContent(data: NluTrainingData): boolean {
  return (
    data.examples.length > 0 ||
    Object.keys(data.synonyms).length > 0 ||
    data.regexFeatures.length > 0 ||
    data.lookupTables.length > 0 ||
    Object.keys(data.responses).length > 0
  );
}

/** The NLU data (merged; null without any) and the stories and rules of the data paths. */
export async function readTrainingData(
  dataPaths: readonly string[],
  log: (line: string) => void,
): Promise<{ data: NluTrainingData | null; stories: StoryBlock[]; flows: FlowsSource[] }> {
  const parts: NluTrainingData[] = [];
  const stories: StoryBlock[] = [];
  const flows: FlowsSource[] = [];
  for (const file of await yamlFiles(dataPaths)) {
    const text = await readFile(file, 'utf8');
    if (/^flows[ \t]*:/m.test(text)) flows.push({ path: file, text });
    const result = readNluYaml(text, file);
    for (const w of result.warnings) log(`warning: ${w}`);
    if (hasNluContent(result.data)) parts.push(result.data);
    if (hasStoriesOrRules(text)) {
      const read = readStoriesYaml(text, file);
      for (const w of read.warnings) log(`warning: ${w}`);
      stories.push(...read.blocks);
    }
  }
  if (parts.length === 0 && stories.length === 0 && flows.length === 0) {
    throw new Error(
      `no training data (NLU, stories, rules or flows) found in ${dataPaths.join(', ')}`,
    );
  }
  return { data: parts.length > 0 ? mergeNluTrainingData(parts) : null, stories, flows };
}

/**
 * `parley train`: reads the NLU data and the stories/rules (NLU-only, dialogue-only or both),
 * domain and config, trains the NLU pipeline and writes a model archive to `out`. Skips training
 * when `out` already holds a model with the same fingerprint (unless `force`).
 */
export async function trainModel(
  opts: TrainOptions,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<TrainResult> {
  const dataPaths = opts.data && opts.data.length ? opts.data : ['data'];
  const domainFile = opts.domain ?? 'domain.yml';
  const configFile = opts.config ?? 'config.yml';
  // With remote storage `--out` is the path in the bucket; the archive is also kept in models/.
  const outDir = opts.remoteStorage === undefined ? (opts.out ?? 'models') : 'models';

  const configText = await readFile(configFile, 'utf8');
  const config = readConfigYaml(configText, configFile);
  // A directory's YAML domain files are merged into one domain (Rasa's `Domain.load`).
  const domainText = (await readDomainPath(domainFile)).text;
  const domain = Domain.fromYaml(domainText, domainFile);

  const { data, stories, flows } = await readTrainingData(dataPaths, log);

  const progress = trainProgress(process.stderr, log);
  const result = await trainNluModel(
    {
      onProgress: progress.onProgress,
      data,
      stories,
      config,
      configText,
      domain,
      domainText,
      outDir,
      flows,
      ...(opts.fixedModelName === undefined ? {} : { fixedModelName: opts.fixedModelName }),
      ...(opts.force === undefined ? {} : { force: opts.force }),
      ...(opts.augmentation === undefined ? {} : { augmentation: opts.augmentation }),
    },
    log,
  ).finally(() => progress.stop());
  if (opts.remoteStorage !== undefined) {
    const key = await uploadTrainedModel(opts.remoteStorage, result.path, opts.out ?? null, log);
    return { ...result, remoteKey: key };
  }
  return result;
}
