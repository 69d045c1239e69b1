import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { evaluateIntents, type NluEvaluation } from 'src/core/nlu';
import { mergeNluTrainingData, readNluYaml, type NluTrainingData } from 'src/core/training-data';
import { loadModelArchive, resolveModelPath } from 'src/modules/model/sources/model-loader';
import { noModelMessage } from './messages';

/** Options of `parley test nlu`, as commander hands them over. */
export interface TestNluOptions {
  model?: string;
  nlu?: string;
  out?: string;
}

export interface TestNluResult {
  readonly evaluation: NluEvaluation;
  /** Files written to the output directory. */
  readonly files: string[];
}

const YAML_EXTENSIONS = new Set(['.yml', '.yaml']);

/** YAML files under a file or directory, sorted (an explicit file is taken whatever its name). */
async function yamlFiles(path: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (p: string, explicit: boolean): Promise<void> => {
    const info = await stat(p);
    if (info.isDirectory()) {
      for (const entry of (await readdir(p)).sort()) {
        if (!entry.startsWith('.')) await walk(join(p, entry), false);
      }
    } else if (explicit || YAML_EXTENSIONS.has(extname(p).toLowerCase())) {
      out.push(p);
    }
  };
  await walk(path, true);
  return out.sort();
}

/** Loads the NLU of `--model` (an archive, or the newest archive of a directory). */
export async function loadCliNlu(model: string | undefined) {
  const requested = model ?? 'models';
  const path = await resolveModelPath(resolve(requested));
  if (path === null) throw new Error(noModelMessage(requested));
  const assistant = await loadModelArchive(path);
  if (assistant.nlu === undefined) throw new Error(`${path}: the model has no trained NLU`);
  return { path, nlu: assistant.nlu };
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/**
 * `parley test nlu`: evaluates the model's NLU on test data and writes Rasa's report files to
 * `out`: intent_report.json / intent_errors.json, response_selection_report.json /
 * response_selection_errors.json, and `<extractor>_report.json` / `<extractor>_errors.json`.
 */
export async function testNlu(
  opts: TestNluOptions,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<TestNluResult> {
  if (opts.nlu === undefined) throw new Error('--nlu <file|dir> is required');
  const { path, nlu } = await loadCliNlu(opts.model);
  const parts: NluTrainingData[] = [];
  for (const file of await yamlFiles(opts.nlu)) {
    const result = readNluYaml(await readFile(file, 'utf8'), file);
    for (const w of result.warnings) log(`warning: ${w}`);
    if (result.data.examples.length > 0) parts.push(result.data);
  }
  if (parts.length === 0) throw new Error(`no NLU examples found in ${opts.nlu}`);
  const data = mergeNluTrainingData(parts);
  log(`Evaluating ${path} on ${data.examples.length} examples...`);
  const evaluation = evaluateIntents(nlu, data);

  const outDir = opts.out ?? 'results';
  await mkdir(outDir, { recursive: true });
  const files: string[] = [];
  const write = async (name: string, value: unknown): Promise<void> => {
    const file = join(outDir, name);
    await writeFile(file, json(value));
    files.push(file);
  };
  if (evaluation.intent_evaluation !== null) {
    await write('intent_report.json', evaluation.intent_evaluation.report);
    await write('intent_errors.json', evaluation.intent_evaluation.errors);
  }
  if (evaluation.response_selection_evaluation !== null) {
    await write('response_selection_report.json', evaluation.response_selection_evaluation.report);
    await write('response_selection_errors.json', evaluation.response_selection_evaluation.errors);
  }
  for (const [extractor, result] of Object.entries(evaluation.entity_evaluation)) {
    await write(`${extractor}_report.json`, result.report);
    await write(`${extractor}_errors.json`, result.errors);
  }
  return { evaluation, files };
}

/** The summary lines `parley test nlu` prints. */
export function summaryLines(evaluation: NluEvaluation): string[] {
  const f = (n: number): string => n.toFixed(3);
  const lines: string[] = [];
  const line = (
    what: string,
    r: { accuracy: number; f1_score: number; precision: number },
  ): void => {
    lines.push(
      `${what}: accuracy ${f(r.accuracy)}, F1-score ${f(r.f1_score)}, precision ${f(r.precision)}`,
    );
  };
  if (evaluation.intent_evaluation !== null) {
    line('Intent evaluation', evaluation.intent_evaluation);
  } else lines.push('Intent evaluation: no intent classifier in the model');
  if (evaluation.response_selection_evaluation !== null) {
    line('Response selection evaluation', evaluation.response_selection_evaluation);
  }
  for (const [extractor, result] of Object.entries(evaluation.entity_evaluation)) {
    line(`Entity evaluation (${extractor})`, result);
  }
  return lines;
}
