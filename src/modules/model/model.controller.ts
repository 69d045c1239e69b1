import { Controller, HttpCode, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ModelService } from './model.service';

/** Rasa's model routes. Auth runs first (global guard). */
@Controller('model')
export class ModelController {
  constructor(private readonly models: ModelService) {}

  @Post('parse')
  @HttpCode(200)
  parse(@Req() req: Request, @Query('emulation_mode') emulationMode: unknown): unknown {
    const body: unknown = req.body;
    return this.models.parse(body, emulationMode);
  }
}
