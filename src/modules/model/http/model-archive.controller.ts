import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ModelArchiveServer } from './model-archive.server';

/**
 * `GET /models/<name-or-latest>` — Parley as a model server for other Parley (or Rasa) servers:
 * the archive, its SHA-256 as `ETag`, `If-None-Match` honoured with 304. Opt-in with
 * `PARLEY_SERVE_MODELS=true`; authenticated like every REST route (global guard).
 */
@Controller('models')
export class ModelArchiveController {
  constructor(private readonly archives: ModelArchiveServer) {}

  @Get(':name')
  async get(
    @Param('name') name: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const archive = await this.archives.find(name);
    res.set({ ETag: `"${archive.hash}"`, filename: archive.filename });
    if (ifNoneMatch !== undefined && ModelArchiveServer.matches(ifNoneMatch, archive.hash)) {
      res.status(304).end();
      return;
    }
    res
      .status(200)
      .set({
        'Content-Type': 'application/gzip',
        'Content-Disposition': `attachment; filename="${archive.filename}"`,
      })
      .end(archive.bytes);
  }
}
