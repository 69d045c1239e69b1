import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { loadIdeAssets, type IdeAsset } from './graphiql-assets';
import { graphiqlPage, IDE_ASSET_PREFIX, IDE_SCRIPT } from './graphiql-page';

export const GRAPHQL_PATH = '/api/graphql';

/**
 * Serves the GraphiQL page on `GET /api/graphql` for browsers (Accept: text/html) and its files
 * under `/api/graphql/ide/`, before authentication (the page holds no data; every operation it
 * sends carries the pasted token). Off with GRAPHQL_IDE=false: then those requests fall
 * through to the API, which answers 401 without a token.
 */
@Injectable()
export class GraphiqlMiddleware implements NestMiddleware {
  private assets: ReadonlyMap<string, IdeAsset> | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  use(req: Request, res: Response, next: NextFunction): void {
    if (!this.config.graphql.ide || (req.method !== 'GET' && req.method !== 'HEAD')) {
      next();
      return;
    }
    const path = req.originalUrl.split('?')[0] ?? '';
    if (path.startsWith(IDE_ASSET_PREFIX)) {
      this.assets ??= loadIdeAssets(IDE_SCRIPT);
      const asset = this.assets.get(path.slice(IDE_ASSET_PREFIX.length));
      if (asset === undefined) {
        next();
        return;
      }
      res.status(200).set('Content-Type', asset.contentType);
      res.set('Cache-Control', 'public, max-age=3600').send(asset.body);
      return;
    }
    const wantsHtml = (req.headers.accept ?? '').includes('text/html');
    if ((path === GRAPHQL_PATH || path === `${GRAPHQL_PATH}/`) && wantsHtml) {
      res
        .status(200)
        .set('Content-Type', 'text/html; charset=utf-8')
        .set('Cache-Control', 'no-store')
        .send(graphiqlPage(GRAPHQL_PATH));
      return;
    }
    next();
  }
}
