import { Controller, Get, NotFoundException, Param, Res, type Type } from '@nestjs/common';
import type { Response } from 'express';
import { Public } from 'src/platform/auth/public.decorator';
import { InspectorPages } from './inspector-pages';

/**
 * `GET /webhooks/<channel>/inspect.html` and `GET /webhooks/<channel>/assets/<file>` of one
 * channel. Public, as in Rasa: the page holds no conversation data (it asks for it with the
 * token in its own URL). One class per channel, so only configured names have routes.
 */
export function inspectorPageController(channel: string): Type {
  @Public()
  @Controller(`webhooks/${channel}`)
  class InspectorPageController {
    constructor(readonly pages: InspectorPages) {}

    @Get('inspect.html')
    page(@Res() res: Response): void {
      const html = this.pages.html(channel);
      if (html === null) throw new NotFoundException();
      res
        .status(200)
        .type('text/html; charset=utf-8')
        .set('Cache-Control', 'no-store')
        .set('X-Content-Type-Options', 'nosniff')
        .set(
          'Content-Security-Policy',
          "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        )
        .send(html);
    }

    @Get('assets/:file')
    asset(@Param('file') file: string, @Res() res: Response): void {
      const asset = this.pages.asset(file);
      if (asset === null) throw new NotFoundException();
      res
        .status(200)
        .type(`${asset.type}; charset=utf-8`)
        .set('X-Content-Type-Options', 'nosniff')
        .send(asset.body);
    }
  }
  Object.defineProperty(InspectorPageController, 'name', {
    value: `InspectorPage[${channel}]`,
  });
  return InspectorPageController;
}
