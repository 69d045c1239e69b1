import { Inject, Injectable, Logger, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import passport from 'passport';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { OidcJwtStrategy } from './oidc-jwt.strategy';
import { type OidcPrincipal } from './oidc-principal';

export type OidcRequest = Request & { user?: OidcPrincipal };

/** Answers 401 with a GraphQL-shaped body: the operation never runs. */
export function sendUnauthenticated(res: Response, message: string): void {
  res
    .status(401)
    .set('WWW-Authenticate', 'Bearer error="invalid_token"')
    .json({ errors: [{ message, extensions: { code: 'UNAUTHENTICATED' } }] });
}

/** A reason the caller may read; jsonwebtoken's and jwks-rsa's own texts stay in the log. */
function reasonOf(info: unknown): string {
  const name = info instanceof Error ? info.name : '';
  const message = info instanceof Error ? info.message : '';
  if (message === 'No auth token') return 'Missing bearer token.';
  if (name === 'TokenExpiredError') return 'The token has expired.';
  if (name === 'NotBeforeError') return 'The token is not valid yet.';
  if (name === 'JwksRateLimitError' || name === 'SigningKeyNotFoundError') {
    return 'The token is not signed by a key of the identity provider.';
  }
  if (/jwt issuer invalid/.test(message)) return 'The token has the wrong issuer.';
  if (/jwt audience invalid/.test(message)) return 'The token has the wrong audience.';
  return 'The token is invalid.';
}

/**
 * Authenticates every request of the GraphQL endpoint before Apollo sees it: a missing,
 * malformed, expired or foreign token gets HTTP 401 `UNAUTHENTICATED` and the query is never
 * parsed or run. The verified principal is put on `req.user` for the role check.
 */
@Injectable()
export class OidcAuthMiddleware implements NestMiddleware {
  private readonly logger = new Logger('OidcAuth');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly jwt: OidcJwtStrategy,
  ) {}

  use(req: OidcRequest, res: Response, next: NextFunction): void {
    if (this.config.oidc.issuerUrl === null) {
      sendUnauthenticated(res, 'No identity provider is configured (OIDC_ISSUER_URL).');
      return;
    }
    const authenticate = passport.authenticate(
      this.jwt.strategy,
      { session: false },
      (err: unknown, user: OidcPrincipal | false, info: unknown) => {
        if (err || !user) {
          const failure = err ?? info;
          this.logger.debug({
            msg: 'bearer token refused',
            error: failure instanceof Error ? `${failure.name}: ${failure.message}` : failure,
          });
          sendUnauthenticated(res, reasonOf(failure));
          return;
        }
        req.user = user;
        next();
      },
    ) as (req: Request, res: Response, next: NextFunction) => void;
    authenticate(req, res, next);
  }
}
