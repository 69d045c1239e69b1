import { Controller, Inject, Logger, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ModelStore } from 'src/modules/model/sources/model-store.service';
import {
  deliverCallback,
  trainingFailure as failure,
  parseTrainQuery,
  runTraining,
  TrainingFailed,
  trainingText,
  type TrainedArchive,
} from 'src/modules/model/training/train.service';
import { TrainingJobs } from 'src/modules/model/training/training-jobs';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/**
 * `POST /model/train`. Auth runs first (global guard). Answers with the archive bytes,
 * or, with `callback_url`, 204 at once and the result POSTed to that URL later.
 */
@Controller('model')
export class TrainController {
  private readonly logger = new Logger(TrainController.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: ModelStore,
    /** Counts the jobs in progress, for `GET /status`. */
    private readonly jobs: TrainingJobs,
  ) {}

  @Post('train')
  async train(
    @Req() req: Request,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const text = trainingText(req.body);
    const options = parseTrainQuery(query);
    const remote = this.config.files.remoteStorage;
    // A server running with remote storage also uploads what it trains (to models/ in the bucket).
    const persist =
      remote === null ? undefined : (path: string) => this.store.persist(remote, path);
    const job = (): Promise<TrainedArchive> =>
      this.jobs.track(() => runTraining(text, options, this.config, this.logger, persist));

    if (options.callbackUrl !== null) {
      const url = options.callbackUrl;
      res.status(204).end();
      void job().then(
        (archive) => deliverCallback(url, archive, this.logger),
        (e: unknown) =>
          deliverCallback(url, e instanceof TrainingFailed ? e.body : failure(e), this.logger),
      );
      return;
    }

    try {
      const archive = await job();
      res
        .status(200)
        .set({
          'Content-Type': 'application/gzip',
          filename: archive.filename,
          'Content-Disposition': `attachment; filename="${archive.filename}"`,
        })
        .end(archive.bytes);
    } catch (e) {
      if (!(e instanceof TrainingFailed)) throw e;
      res.status(e.body.code).json(e.body);
    }
  }
}
