import { Controller, HttpCode, Logger, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DialogueError } from 'src/core';
import { evaluateIntents, type NluEvaluation } from 'src/core/nlu';
import { ServedModel } from 'src/modules/model/served-model';
import { ApiError } from 'src/platform/errors/api-error';
import { failureBody, type FailureBody } from 'src/platform/errors/failure-body';
import {
  callbackUrlParam,
  crossValidate,
  foldsParam,
  loadNluFrom,
  modelParam,
  readBodyConfig,
  readTestData,
  yamlBody,
} from './evaluate';

/** How long a callback POST may take. */
export const CALLBACK_TIMEOUT_MS = 30_000;

interface EvaluateRequest {
  readonly body: unknown;
  readonly model: string | null;
  readonly folds: number | null;
}

/** The failure body a callback receives for an error (non-API errors → 500). */
export function callbackFailure(e: unknown): FailureBody {
  if (e instanceof DialogueError || e instanceof ApiError) {
    return failureBody(e.code, e.message, e.details);
  }
  return failureBody(
    'INTERNAL',
    `An unexpected error occurred during evaluation. Error: ${e instanceof Error ? e.message : String(e)}`,
  );
}

/**
 * `POST /model/test/intents`: evaluates NLU test data (YAML body) against the loaded
 * model, another archive (`?model=`, loaded only for this request) or by stratified
 * cross-validation (`?cross_validation_folds=k`, config in the body). With `callback_url` it
 * answers 204 at once and POSTs the result (or failure body) there later. Auth runs first.
 */
@Controller('model')
export class EvaluateController {
  private readonly logger = new Logger(EvaluateController.name);

  constructor(private readonly served: ServedModel) {}

  @Post('test/intents')
  @HttpCode(200)
  async testIntents(
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @Query('model') model: unknown,
    @Query('callback_url') callbackUrl: unknown,
    @Query('cross_validation_folds') folds: unknown,
  ): Promise<NluEvaluation | undefined> {
    const request: EvaluateRequest = {
      body: req.body as unknown,
      model: modelParam(model),
      folds: foldsParam(folds),
    };
    const callback = callbackUrlParam(callbackUrl);
    if (callback === null) return this.evaluate(request);
    res.status(204);
    void this.evaluate(request).then(
      (result) => this.deliver(callback, result),
      (e: unknown) => this.deliver(callback, callbackFailure(e)),
    );
    return undefined;
  }

  private async evaluate(request: EvaluateRequest): Promise<NluEvaluation> {
    if (request.folds === null && request.model === null) this.served.require();
    const text = yamlBody(request.body);
    const data = readTestData(text);
    if (request.folds !== null) {
      return crossValidate(data, readBodyConfig(text), request.folds);
    }
    const nlu =
      request.model !== null ? await loadNluFrom(request.model) : this.served.require().nlu;
    if (nlu === undefined) {
      throw new DialogueError(
        'MODEL.NOT_LOADED',
        'The loaded model has no trained NLU to evaluate. Load a model with an NLU pipeline.',
      );
    }
    return evaluateIntents(nlu, data);
  }

  private async deliver(url: string, payload: unknown): Promise<void> {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
      });
      if (!res.ok) this.logger.warn({ url, status: res.status }, 'evaluation callback refused');
    } catch (e) {
      this.logger.warn(
        { url, error: e instanceof Error ? e.message : String(e) },
        'evaluation callback failed',
      );
    }
  }
}
