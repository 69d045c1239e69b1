import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from 'src/platform/auth/public.decorator';
import { ReviewPage } from './review-page';

/**
 * `GET /review/` (the page) and `GET /review/assets/<file>`. Public: the page holds no
 * conversation data; it signs in at the identity provider and sends the token to /api/graphql.
 */
@Public()
@Controller('review')
export class ReviewPageController {
  constructor(private readonly page: ReviewPage) {}

  @Get()
  html(@Res() res: Response): void {
    res
      .status(200)
      .type('text/html; charset=utf-8')
      .set('Cache-Control', 'no-store')
      .set('X-Content-Type-Options', 'nosniff')
      .set('Referrer-Policy', 'no-referrer')
      .set('Content-Security-Policy', this.page.contentSecurityPolicy())
      .send(this.page.html());
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    const asset = this.page.asset(file);
    if (asset === null) throw new NotFoundException();
    res
      .status(200)
      .type(`${asset.type}; charset=utf-8`)
      .set('X-Content-Type-Options', 'nosniff')
      .send(asset.body);
  }
}
