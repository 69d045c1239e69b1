import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';

/**
 * Refuses a query document longer than GRAPHQL_MAX_QUERY_BYTES with HTTP 400 `BAD_USER_INPUT`
 * before Apollo parses it (runs after authentication: anonymous callers learn nothing).
 */
@Injectable()
export class GraphqlDocumentSizeMiddleware implements NestMiddleware {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const body = req.body as { query?: unknown } | undefined;
    const query = req.method === 'GET' ? req.query.query : body?.query;
    const max = this.config.graphql.maxQueryBytes;
    if (typeof query === 'string' && Buffer.byteLength(query, 'utf8') > max) {
      res.status(400).json({
        errors: [
          {
            message: `The query document is longer than ${max} bytes (GRAPHQL_MAX_QUERY_BYTES).`,
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      });
      return;
    }
    next();
  }
}
