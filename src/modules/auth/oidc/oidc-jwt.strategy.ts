import { Inject, Injectable } from '@nestjs/common';
import { passportJwtSecret } from 'jwks-rsa';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { principalOf } from './oidc-principal';

/** Only asymmetric algorithms: `none` and HS* (alg confusion with the public key) are refused. */
export const OIDC_ALGORITHMS = ['RS256', 'ES256'] as const;

/**
 * Verifies `Authorization: Bearer <jwt>` access tokens of the configured OpenID Connect issuer
 * (Keycloak, or the embedded provider): signature by a key of the issuer's JWKS (fetched on an
 * unknown `kid`, so rotated keys are picked up; cached 10 min; at most 10 fetches a minute),
 * RS256/ES256 only, exact `iss`, `aud` when configured, `exp`/`nbf` with 30 s tolerance.
 *
 * The passport-jwt strategy is held per application instead of registered in passport's global
 * registry by name, so two Parley apps in one process (tests) cannot overwrite each other's.
 */
@Injectable()
export class OidcJwtStrategy {
  readonly strategy: Strategy;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { issuerUrl, jwksUri, audience } = config.oidc;
    // Without an issuer the middleware refuses every token before this strategy runs.
    const issuer = issuerUrl ?? 'urn:parley:no-issuer-configured';
    this.strategy = new Strategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        secretOrKeyProvider: passportJwtSecret({
          jwksUri: jwksUri ?? `${issuer}/protocol/openid-connect/certs`,
          cache: true,
          cacheMaxEntries: 10,
          cacheMaxAge: 10 * 60_000,
          rateLimit: true,
          jwksRequestsPerMinute: 10,
          timeout: 5_000,
        }),
        algorithms: [...OIDC_ALGORITHMS],
        issuer,
        audience: audience ?? undefined,
        ignoreExpiration: false,
        jsonWebTokenOptions: { clockTolerance: 30 },
      },
      (payload: unknown, done: (error: unknown, user?: unknown) => void) => {
        done(null, principalOf(payload, config.oidc) ?? false);
      },
    );
  }
}
