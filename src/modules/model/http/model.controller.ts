import { Controller, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ModelService } from './model.service';

/** Rasa's model routes. Auth runs first (global guard). */
@Controller('model')
export class ModelController {
  constructor(private readonly models: ModelService) {}

  /**
   * The hottest route: the answer is written directly (the bytes and headers `res.json` would
   * send: `application/json; charset=utf-8` and the length), skipping Express's generic send.
   */
  @Post('parse')
  parse(@Req() req: Request, @Res() res: Response): void {
    const body: unknown = req.body;
    const json = JSON.stringify(this.models.parse(body, req.query.emulation_mode));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(json));
    res.end(json);
  }
}
