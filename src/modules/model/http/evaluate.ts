import { resolve } from 'node:path';
import { DialogueError } from 'src/core';
import { evaluateIntents, trainNlu, type NluEvaluation, type TrainedNlu } from 'src/core/nlu';
import { Random } from 'src/core/nlu/random';
import {
  baseIntent,
  checkYamlDepth,
  readConfigYaml,
  readNluYaml,
  type NluConfig,
  type NluExample,
  type NluTrainingData,
} from 'src/core/training-data';
import { loadModelArchive, resolveModelPath } from 'src/modules/model/sources/model-loader';
import { parseDocument, stringify } from 'yaml';

export const NO_TEST_DATA =
  'You must provide some nlu data in the request body in order to evaluate your model.';
const BODY_FILE = 'request body';
const CONFIG_KEYS = ['recipe', 'language', 'assistant_id', 'pipeline'] as const;

/** Seed of the fold assignment and of training in cross-validation. */
export const CROSS_VALIDATION_SEED = 42;

/** `cross_validation_folds` query value: absent → null; an integer ≥ 2; else 400. */
export function foldsParam(value: unknown): number | null {
  if (value === undefined) return null;
  const text = typeof value === 'string' ? value.trim() : '';
  const folds = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(folds) || folds < 2) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      "Invalid parameter value for 'cross_validation_folds'. Should be an integer of at least 2.",
      { parameter: 'cross_validation_folds', in: 'query' },
    );
  }
  return folds;
}

/** `callback_url` query value: absent → null; an http(s) URL; else 400. */
export function callbackUrlParam(value: unknown): string | null {
  if (value === undefined) return null;
  let url: URL | null = null;
  try {
    url = typeof value === 'string' ? new URL(value) : null;
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      "Invalid parameter value for 'callback_url'. Should be an http(s) URL.",
      { parameter: 'callback_url', in: 'query' },
    );
  }
  return url.toString();
}

/** `model` query value: absent → null; a non-empty string; else 400. */
export function modelParam(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      "Invalid parameter value for 'model'. Should be the path of a model archive.",
      { parameter: 'model', in: 'query' },
    );
  }
  return value;
}

/** The request body as YAML text: a missing/empty body or a JSON value is a 400. */
export function yamlBody(body: unknown): string {
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) {
    throw new DialogueError('REQUEST.BODY_MISSING', NO_TEST_DATA);
  }
  if (typeof body !== 'string') {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      'The request body must be NLU test data in YAML (Content-Type: application/x-yaml); JSON test data is not supported.',
      { parameter: 'body', in: 'body' },
    );
  }
  return body;
}

/** Reads NLU test data from the body; problems name the line. No examples is a 400. */
export function readTestData(text: string): NluTrainingData {
  const { data } = readNluYaml(text, BODY_FILE);
  if (data.examples.length === 0) {
    throw new DialogueError(
      'TRAINING_DATA.INVALID',
      `${BODY_FILE}: no NLU examples found (expected an 'nlu:' section with examples).`,
    );
  }
  return data;
}

/** The config part (language, pipeline) of a cross-validation body; a pipeline is required. */
export function readBodyConfig(text: string): NluConfig {
  checkYamlDepth(text, BODY_FILE);
  const doc = parseDocument(text);
  const root: unknown = doc.toJS();
  const fields = typeof root === 'object' && root !== null ? (root as Record<string, unknown>) : {};
  const picked: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) if (fields[key] !== undefined) picked[key] = fields[key];
  const config = readConfigYaml(stringify(picked), `${BODY_FILE} (config)`);
  if (config.pipeline === null) {
    throw new DialogueError(
      'CONFIG.INVALID',
      `${BODY_FILE}: cross-validation needs the model configuration: add a 'pipeline:' (and optionally 'language:') to the YAML body.`,
      { parameter: 'pipeline', in: 'body' },
    );
  }
  return config;
}

/** Loads the NLU of another model archive (`?model=`) without touching the served model. */
export async function loadNluFrom(path: string): Promise<TrainedNlu> {
  const archive = await resolveModelPath(resolve(path));
  if (archive === null) {
    throw new DialogueError(
      'MODEL.NOT_FOUND',
      `Model '${path}' could not be loaded: no model archive at that path.`,
      { parameter: 'model', in: 'query' },
    );
  }
  let nlu: TrainedNlu | undefined;
  try {
    nlu = (await loadModelArchive(archive)).nlu;
  } catch (e) {
    if (e instanceof DialogueError) throw e;
    throw new DialogueError(
      'MODEL.INVALID_ARCHIVE',
      `${path}: could not load the model: ${e instanceof Error ? e.message : String(e)}`,
      { reason: 'unreadable' },
    );
  }
  if (nlu === undefined) {
    throw new DialogueError('MODEL.INVALID_ARCHIVE', `${path}: the model has no trained NLU.`, {
      reason: 'no_nlu',
    });
  }
  return nlu;
}

/** Stratified fold assignment: per intent, shuffled (seeded) and dealt round-robin. */
export function stratifiedFolds(
  examples: readonly NluExample[],
  k: number,
  seed: number,
): NluExample[][] {
  const random = new Random(seed);
  const byIntent = new Map<string, NluExample[]>();
  for (const ex of examples) {
    const key = ex.intent;
    const group = byIntent.get(key);
    if (group) group.push(ex);
    else byIntent.set(key, [ex]);
  }
  const folds: NluExample[][] = Array.from({ length: k }, () => []);
  let next = 0;
  for (const key of [...byIntent.keys()].sort()) {
    const group = random.shuffle([...(byIntent.get(key) ?? [])]);
    for (const ex of group) {
      folds[next % k]?.push(ex);
      next++;
    }
  }
  return folds;
}

/**
 * Stands in for one TrainedNlu in evaluateIntents: each held-out example is processed by the
 * model of its fold, so the reports are computed once over the predictions of all folds.
 */
class FoldedNlu {
  private index = 0;

  constructor(
    private readonly order: ReadonlyArray<{ text: string; model: TrainedNlu }>,
    private readonly first: TrainedNlu,
  ) {}

  get componentNames(): string[] {
    return this.first.componentNames;
  }

  get entityExtractors(): string[] {
    return this.first.entityExtractors;
  }

  get hasResponseSelector(): boolean {
    return this.first.hasResponseSelector;
  }

  process(text: string): ReturnType<TrainedNlu['process']> {
    const entry = this.order[this.index++];
    if (entry === undefined || entry.text !== text) {
      throw new Error('cross-validation: examples evaluated out of order');
    }
    return entry.model.process(text);
  }
}

/**
 * Stratified k-fold cross-validation: trains on k-1 folds, predicts the held-out fold, then
 * computes every report once over all held-out predictions (so `f1_score` is a real number,
 * unlike Rasa's, which reads a misspelled key and answers null).
 */
export async function crossValidate(
  data: NluTrainingData,
  config: NluConfig,
  folds: number,
  seed: number = CROSS_VALIDATION_SEED,
): Promise<NluEvaluation> {
  const intents = new Set(data.examples.map((e) => baseIntent(e.intent)));
  if (intents.size < 2) {
    throw new DialogueError(
      'TRAINING_DATA.INVALID',
      `${BODY_FILE}: cross-validation needs examples of at least two intents.`,
    );
  }
  if (data.examples.length < folds) {
    throw new DialogueError(
      'REQUEST.INVALID_PARAMETER',
      `Cannot cross-validate ${data.examples.length} examples with ${folds} folds.`,
      { parameter: 'cross_validation_folds', in: 'query' },
    );
  }
  const split = stratifiedFolds(data.examples, folds, seed);
  const order: Array<{ text: string; model: TrainedNlu }> = [];
  const heldOut: NluExample[] = [];
  let first: TrainedNlu | null = null;
  for (let i = 0; i < split.length; i++) {
    const test = split[i] ?? [];
    if (test.length === 0) continue;
    const train = split.filter((_, j) => j !== i).flat();
    const model = await trainNlu({ ...data, examples: train }, config, {
      seed,
      substituteUnsupported: true,
    });
    first ??= model;
    for (const ex of test) {
      order.push({ text: ex.text, model });
      heldOut.push(ex);
    }
  }
  if (first === null) throw new Error('cross-validation: no fold was trained');
  const folded = new FoldedNlu(order, first) as unknown as TrainedNlu;
  return evaluateIntents(folded, { ...data, examples: heldOut });
}
