import { Inject, Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type OidcPrincipal } from './oidc-principal';
import { OidcTokenVerifier, TokenRefused } from './oidc-token-verifier';

export type OidcRequest = Request & { user?: OidcPrincipal };

/** Answers 401 with a GraphQL-shaped body: the operation never runs. */
export function sendUnauthenticated(res: Response, message: string): void {
  res
    .status(401)
    .set('WWW-Authenticate', 'Bearer error="invalid_token"')
    .json({ errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }] });
}

/**
 * Authenticates every request of the GraphQL endpoint before Apollo sees it: a missing,
 * malformed, expired or foreign token gets HTTP 401 `UNAUTHENTICATED` and the query is never
 * parsed or run. The principal verified from this request's own header is put on this
 * request's `req.user` for the role check; nothing of one request's verdict is kept anywhere
 * another request could read it.
 */
@Injectable()
export class OidcAuthMiddleware implements NestMiddleware {
  private readonly logger = new Logger('OidcAuth');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly verifier: OidcTokenVerifier,
  ) {}

  use(req: OidcRequest, res: Response, next: NextFunction): void {
    // A principal can only come from the verification below, never from earlier code.
    delete req.user;
    if (this.config.oidc.issuerUrl === null) {
      sendUnauthenticated(res, 'No identity provider is configured (OIDC_ISSUER_URL).');
      return;
    }
    this.verifier.verify(req.headers.authorization).then(
      (principal) => {
        req.user = principal;
        next();
      },
      (error: unknown) => {
        const cause = error instanceof TokenRefused ? error.cause : error;
        this.logger.debug({
          msg: 'bearer token refused',
          error: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause,
        });
        sendUnauthenticated(
          res,
          error instanceof TokenRefused ? error.reason : 'The token is invalid.',
        );
      },
    );
  }
}
