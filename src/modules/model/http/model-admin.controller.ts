import { Controller, Delete, Get, Headers, HttpCode, Put, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ModelAdminService, parseReplaceRequest } from './model-admin.service';

/** `PUT /model` and `DELETE /model` (ops 17, 18). Auth runs first (global guard). */
@Controller('model')
export class ModelAdminController {
  constructor(private readonly admin: ModelAdminService) {}

  @Put()
  @HttpCode(204)
  async replace(@Req() req: Request): Promise<void> {
    const body: unknown = req.body;
    await this.admin.replace(parseReplaceRequest(body));
  }

  @Delete()
  @HttpCode(204)
  unload(): void {
    this.admin.unload();
  }
}

/** `GET /domain`. Auth runs first (global guard); 409 without a model. */
@Controller('domain')
export class DomainController {
  constructor(private readonly admin: ModelAdminService) {}

  @Get()
  domain(@Headers('accept') accept: string | undefined, @Res() res: Response): void {
    const { contentType, body } = this.admin.domain(accept);
    res.status(200).type(contentType);
    if (typeof body === 'string') res.send(body);
    else res.json(body);
  }
}
