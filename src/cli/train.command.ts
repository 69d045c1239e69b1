import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Domain } from 'src/core';
import {
  canonicalJson,
  fingerprint,
  scanModelDirectory,
  writeModelArchive,
} from 'src/core/model-archive';
import { trainNlu } from 'src/core/nlu';
import {
  mergeNluTrainingData,
  readConfigYaml,
  readNluYaml,
  type NluTrainingData,
} from 'src/core/training-data';
import { MINIMUM_COMPATIBLE_VERSION, PARLEY_VERSION } from 'src/platform/config/version';

/** Options of `parley train`, as commander hands them over. */
export interface TrainOptions {
  data?: string[];
  domain?: string;
  config?: string;
  out?: string;
  fixedModelName?: string;
  force?: boolean;
}

export interface TrainResult {
  /** Path of the written archive, or of the existing one when training was skipped. */
  readonly path: string;
  readonly skipped: boolean;
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

/**
 * `parley train`: reads the NLU data (files holding only stories/rules are ignored for now),
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
  const outDir = opts.out ?? 'models';

  const configText = await readFile(configFile, 'utf8');
  const config = readConfigYaml(configText, configFile);
  const domainText = await readFile(domainFile, 'utf8');
  const domain = Domain.fromYaml(domainText, domainFile);

  const parts: NluTrainingData[] = [];
  for (const file of await yamlFiles(dataPaths)) {
    const result = readNluYaml(await readFile(file, 'utf8'), file);
    for (const w of result.warnings) log(`warning: ${w}`);
    if (hasNluContent(result.data)) parts.push(result.data);
  }
  if (parts.length === 0) {
    throw new Error(`no NLU training data found in ${dataPaths.join(', ')}`);
  }
  const data = mergeNluTrainingData(parts);

  const print = fingerprint(
    { nlu: canonicalJson(data), config: configText, domain: domainText },
    PARLEY_VERSION,
  );
  if (!opts.force) {
    const existing = await sameFingerprint(outDir, print);
    if (existing !== null) {
      log(
        `Nothing changed: ${existing} was trained on the same data, domain and config. Use --force to train anyway.`,
      );
      return { path: existing, skipped: true };
    }
  }

  log(`Training NLU on ${data.examples.length} examples...`);
  let lastReported = '';
  const nlu = await trainNlu(data, config, {
    substituteUnsupported: true,
    responses: domain.responses,
    onProgress: (stage, fraction) => {
      const pct = Math.floor(fraction * 10) * 10;
      const key = `${stage}:${pct}`;
      if (key === lastReported) return;
      lastReported = key;
      log(`  ${stage} ${pct}%`);
    },
  });
  for (const w of nlu.warnings) log(`warning: ${w}`);

  const written = await writeModelArchive({
    outDir,
    ...(opts.fixedModelName === undefined ? {} : { fixedModelName: opts.fixedModelName }),
    files: {
      'domain.yml': domainText,
      'config.yml': configText,
      'nlu/model.json': JSON.stringify(nlu.toJSON()),
    },
    fingerprint: print,
    parleyVersion: PARLEY_VERSION,
    minimumCompatibleVersion: MINIMUM_COMPATIBLE_VERSION,
    assistantId: config.assistantId,
    components: nlu.componentNames,
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
