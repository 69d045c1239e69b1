import { Inject, Injectable } from '@nestjs/common';
import { type Algorithm, decode, type JwtPayload, verify } from 'jsonwebtoken';
import { JwksClient } from 'jwks-rsa';
import { APP_CONFIG, type AppConfig } from 'src/platform/config/app-config';
import { type OidcPrincipal, principalOf } from './oidc-principal';

/** Only asymmetric algorithms: `none` and HS* (alg confusion with the public key) are refused. */
export const OIDC_ALGORITHMS: readonly Algorithm[] = ['RS256', 'ES256'];

/** Why a bearer token was refused; `reason` may be shown to the caller, `cause` only logged. */
export class TokenRefused extends Error {
  constructor(
    readonly reason: string,
    override readonly cause?: unknown,
  ) {
    super(reason);
    this.name = 'TokenRefused';
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Longest access token accepted (characters). Keycloak's tokens are 1–2 KB, even with many
 * roles; a larger one is refused before it is decoded or its `kid` looked up.
 */
export const MAX_TOKEN_LENGTH = 8 * 1024;

/** A reason the caller may read; jsonwebtoken's and jwks-rsa's own texts stay in the log. */
function reasonOf(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : '';
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
 * Verifies `Authorization: Bearer <jwt>` access tokens of the configured OpenID Connect issuer
 * (Keycloak, or the embedded provider): signature by a key of the issuer's JWKS (fetched on an
 * unknown `kid`, so rotated keys are picked up; cached 10 min; at most 10 fetches a minute),
 * RS256/ES256 only, exact `iss`, `aud` when configured, `exp`/`nbf` with 30 s tolerance, at
 * most {@link MAX_TOKEN_LENGTH} characters. The key comes from the configured JWKS only: header
 * fields that name other keys (`jku`, `x5u`, `jwk`) are never followed.
 *
 * `verify` is a function of its request alone: every call has its own promise and its own
 * locals, and the only state shared between calls is the JWKS key cache. (Passport's
 * `authenticate` with a strategy object keeps the request's success/fail callbacks on that one
 * shared object, so concurrent requests could receive each other's verdicts.)
 */
@Injectable()
export class OidcTokenVerifier {
  private readonly jwks: JwksClient;
  private readonly issuer: string;
  private readonly audience: string | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const { issuerUrl, jwksUri, audience } = config.oidc;
    // Without an issuer the middleware refuses every token before this verifier runs.
    this.issuer = issuerUrl ?? 'urn:parley:no-issuer-configured';
    this.audience = audience;
    this.jwks = new JwksClient({
      jwksUri: jwksUri ?? `${this.issuer}/protocol/openid-connect/certs`,
      cache: true,
      cacheMaxEntries: 10,
      cacheMaxAge: 10 * 60_000,
      rateLimit: true,
      jwksRequestsPerMinute: 10,
      timeout: 5_000,
    });
  }

  /** The principal of a request's bearer token; rejects with TokenRefused otherwise. */
  async verify(authorization: string | undefined): Promise<OidcPrincipal> {
    const token = BEARER.exec(authorization ?? '')?.[1];
    if (token === undefined) throw new TokenRefused('Missing bearer token.');
    if (token.length > MAX_TOKEN_LENGTH) {
      throw new TokenRefused(`The token is longer than ${MAX_TOKEN_LENGTH} characters.`);
    }
    const decoded = decode(token, { complete: true });
    if (
      decoded === null ||
      typeof decoded.payload === 'string' ||
      !OIDC_ALGORITHMS.includes(decoded.header.alg as Algorithm)
    ) {
      throw new TokenRefused('The token is invalid.');
    }
    let publicKey: string;
    try {
      publicKey = (await this.jwks.getSigningKey(decoded.header.kid)).getPublicKey();
    } catch (error) {
      throw new TokenRefused(reasonOf(error), error);
    }
    let payload: JwtPayload;
    try {
      payload = verify(token, publicKey, {
        algorithms: [...OIDC_ALGORITHMS],
        issuer: this.issuer,
        ...(this.audience !== null ? { audience: this.audience } : {}),
        clockTolerance: 30,
        complete: false,
      }) as JwtPayload;
    } catch (error) {
      throw new TokenRefused(reasonOf(error), error);
    }
    const principal = principalOf(payload, this.config.oidc);
    if (principal === null) throw new TokenRefused('The token is invalid.');
    return principal;
  }
}
