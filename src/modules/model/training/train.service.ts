import { Logger } from '@nestjs/common';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { DialogueError } from 'src/core';
import { type ProgressCallback } from 'src/core/nlu';
import { readTrainRequest } from 'src/core/training-data/train-request-reader';
import { trainNluModel } from 'src/modules/model/training/train-nlu-model';
import { type AppConfig } from 'src/platform/config/app-config';
import { ApiError } from 'src/platform/errors/api-error';
import { failureBody, type FailureBody } from 'src/platform/errors/failure-body';

export const NO_TRAINING_DATA =
  'You must provide training data in the request body in order to train your model.';
export const JSON_NOT_SUPPORTED =
  'JSON training payloads are no longer supported. Send the training data as one YAML document (Content-Type: application/x-yaml).';
const CALLBACK_TIMEOUT_MS = 60_000;

/** Query parameters of `POST /model/train`. */
export interface TrainQuery {
  readonly saveToDefaultModelDirectory: boolean;
  readonly forceTraining: boolean;
  readonly augmentation: number;
  readonly numThreads: number;
  readonly callbackUrl: string | null;
}

/** A trained (or, unchanged, re-used) archive ready to send. */
export interface TrainedArchive {
  readonly filename: string;
  readonly bytes: Buffer;
}

/** Rasa's `bool_arg`: only `true` (any case) is true; absent → the default. */
function boolArg(value: unknown, fallback: boolean): boolean {
  if (typeof value !== 'string') return fallback;
  return value.toLowerCase() === 'true';
}

/** Rasa's `int_arg`: a value that is not an integer → the default. */
function intArg(value: unknown, fallback: number): number {
  if (typeof value !== 'string' || !/^\s*-?\d+\s*$/.test(value)) return fallback;
  return Number.parseInt(value, 10);
}

export function parseTrainQuery(query: Record<string, unknown>): TrainQuery {
  const callback = query.callback_url;
  return {
    saveToDefaultModelDirectory: boolArg(query.save_to_default_model_directory, true),
    forceTraining: boolArg(query.force_training, false),
    augmentation: intArg(query.augmentation, 50),
    // 0 = not given: training picks its default (both cores of a 2-core machine).
    numThreads: intArg(query.num_threads, 0),
    callbackUrl: typeof callback === 'string' && callback.trim() !== '' ? callback : null,
  };
}

/**
 * Validates the body before anything runs: a string is the YAML document; a parsed JSON object
 * (Rasa 1.x/2.x payload) is refused; nothing at all is a 400.
 */
export function trainingText(body: unknown): string {
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) {
    throw new DialogueError('REQUEST.BODY_MISSING', NO_TRAINING_DATA);
  }
  if (typeof body !== 'string') {
    throw new ApiError('HTTP.MALFORMED_BODY', JSON_NOT_SUPPORTED);
  }
  return body;
}

/** Rasa's failure body for anything training raised (also what a callback receives). */
export function trainingFailure(e: unknown): FailureBody {
  if (e instanceof DialogueError) {
    if (e.code === 'DOMAIN.INVALID') {
      return failureBody(e.code, `Provided domain file is invalid. Error: ${e.message}`, e.details);
    }
    if (e.code === 'TRAINING_DATA.INVALID' || e.code === 'CONFIG.INVALID') {
      return failureBody(
        e.code,
        `The request body does not contain valid YAML. Error: ${e.message}`,
        e.details,
      );
    }
    return failureBody(e.code, e.message, e.details);
  }
  if (e instanceof ApiError) return failureBody(e.code, e.message, e.details);
  const reason = e instanceof Error ? e.message : String(e);
  return {
    ...failureBody('INTERNAL', `An unexpected error occurred during training. Error: ${reason}`),
    reason: 'TrainingError',
  };
}

/** Thrown by `train()`: carries the failure body to send. */
export class TrainingFailed extends Error {
  constructor(readonly body: FailureBody) {
    super(body.message);
    this.name = 'TrainingFailed';
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Training progress as server log lines: each pipeline stage at 0, 25, 50, 75 and 100 %. */
function serverProgress(logger: Logger): ProgressCallback {
  let last = '';
  return (stage, fraction, { index, total }) => {
    const percent = Math.floor(fraction * 4) * 25;
    const key = `${stage}:${percent}`;
    if (key === last) return;
    last = key;
    logger.log(
      { stage, step: `${index + 1}/${total}`, percent },
      `training ${stage} ${percent}% (step ${index + 1}/${total})`,
    );
  };
}

/**
 * Runs one `POST /model/train` job: reads the YAML body, trains the model (NLU, stories and
 * rules, flows — as `parley train`) and writes the
 * archive to the models directory (the `--model` directory, else `models/`) or to a temporary
 * one. The trained model is not loaded. Failures become `TrainingFailed` with Rasa's body.
 */
export async function runTraining(
  text: string,
  query: TrainQuery,
  config: AppConfig,
  logger: Logger,
  /** Called with the archive path before it is read (upload to remote storage). */
  persist?: (archivePath: string) => Promise<unknown>,
): Promise<TrainedArchive> {
  let tempDir: string | null = null;
  try {
    const request = readTrainRequest(text);
    for (const w of request.warnings) logger.warn(w);
    let outDir: string;
    if (query.saveToDefaultModelDirectory) {
      const configured = resolve(config.files.model);
      outDir = (await isDirectory(configured)) ? configured : resolve('models');
    } else {
      tempDir = await mkdtemp(join(tmpdir(), 'parley-train-'));
      outDir = tempDir;
    }
    const result = await trainNluModel(
      {
        data: request.nlu,
        stories: request.stories,
        flows: request.flows,
        config: request.config,
        configText: request.configText,
        domain: request.domain,
        domainText: request.domainText,
        outDir,
        force: query.forceTraining,
        augmentation: query.augmentation,
        onProgress: serverProgress(logger),
        ...(query.numThreads > 0 ? { threads: query.numThreads } : {}),
      },
      (line) => logger.debug(line),
    );
    logger.log(
      { model: result.path, skipped: result.skipped },
      result.skipped ? 'training skipped: same fingerprint' : 'model trained (POST /model/train)',
    );
    if (persist !== undefined) await persist(result.path);
    return { filename: basename(result.path), bytes: await readFile(result.path) };
  } catch (e) {
    const body = trainingFailure(e);
    if (body.code >= 500) logger.error({ err: e }, 'training failed');
    throw new TrainingFailed(body);
  } finally {
    if (tempDir !== null) await rm(tempDir, { recursive: true, force: true });
  }
}

/** POSTs the result of a background training to `callback_url`; errors are only logged. */
export async function deliverCallback(
  url: string,
  outcome: TrainedArchive | FailureBody,
  logger: Logger,
): Promise<void> {
  try {
    const init: RequestInit =
      'bytes' in outcome
        ? {
            method: 'POST',
            headers: {
              'Content-Type': 'application/gzip',
              filename: outcome.filename,
              'Content-Disposition': `attachment; filename="${outcome.filename}"`,
            },
            body: new Uint8Array(outcome.bytes),
          }
        : {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(outcome),
          };
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS) });
    if (!res.ok) logger.warn({ url, status: res.status }, 'training callback answered an error');
  } catch (e) {
    logger.warn(
      { url, error: e instanceof Error ? e.message : String(e) },
      'could not deliver the training callback',
    );
  }
}
