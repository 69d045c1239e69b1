import { Controller, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ModelLoadedGuard } from 'src/modules/model/model-loaded.guard';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { ModelService, parseCommand } from './model.service';

/** Rasa's model routes. Auth runs first (global guard). */
@Controller('model')
export class ModelController {
  constructor(
    private readonly models: ModelService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The hottest route: the answer is written directly (the bytes and headers `res.json` would
   * send: `application/json; charset=utf-8` and the length), skipping Express's generic send.
   */
  @Post('parse')
  @UseGuards(ModelLoadedGuard)
  parse(@Req() req: Request, @Res() res: Response): void | Promise<void> {
    const body: unknown = req.body;
    const command = parseCommand(body, req.query.emulation_mode, this.config.http.maxTextLength);
    const answer = this.models.parse(command);
    // Only a pipeline that asks a server (Duckling) answers a promise.
    if (answer instanceof Promise) return answer.then((a) => send(res, a));
    send(res, answer);
  }
}

function send(res: Response, answer: unknown): void {
  const json = JSON.stringify(answer);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}
