import { Logger } from '@nestjs/common';
import { verify } from 'jsonwebtoken';
import { isJsonObject } from 'src/core/events/json-values';
import { readBearerJwt } from 'src/modules/channels/connector/bearer-jwt';
import { badSignature } from 'src/modules/channels/connector/connector';

/** The issuer of the bearer tokens Google Chat sends with each event. */
export const GOOGLE_CHAT_ISSUER = 'chat@system.gserviceaccount.com';

/** Clock skew allowed on `exp`/`nbf`/`iat`. */
const CLOCK_TOLERANCE_S = 30;
/** Certificates are kept for their `Cache-Control: max-age`, else this long. */
const DEFAULT_CERTS_MAX_AGE_MS = 60 * 60 * 1000;
/** A token naming an unknown key reads the certificates again at most this often. */
const UNKNOWN_KID_REFETCH_MS = 60 * 1000;

/**
 * Checks the `Authorization: Bearer <JWT>` of a Google Chat event as Google's "Verify requests
 * from Google Chat" asks for project-number tokens (Rasa's `_check_token`): RS256, signed by one
 * of the x509 certificates published for `chat@system.gserviceaccount.com` (chosen by the
 * token's `kid`), issuer `chat@system.gserviceaccount.com`, audience the project number, within
 * its validity (30 s of skew). The certificates are kept as long as Google's `Cache-Control`
 * says (an hour when it says nothing); a token naming an unknown key reads them again at most
 * once a minute. Every failure is a 401 failure body.
 */
export class HangoutsAuth {
  private static readonly log = new Logger('Connector[hangouts]');
  private certs: { byKid: ReadonlyMap<string, string>; until: number; at: number } | null = null;

  constructor(
    private readonly projectId: string,
    private readonly certsUrl: string,
    private readonly timeoutMs: number,
  ) {}

  async verify(authorization: string | undefined): Promise<void> {
    const { token, decoded } = readBearerJwt('hangouts', authorization);
    if (decoded.header.alg !== 'RS256') {
      throw unauthorized('The Bearer token is not an RS256 JWT naming its signing key (kid).');
    }
    const cert = await this.certificate(decoded.header.kid);
    if (cert === null) {
      throw unauthorized('The token is not signed by a key of Google Chat.');
    }
    try {
      verify(token, cert, {
        algorithms: ['RS256'],
        issuer: GOOGLE_CHAT_ISSUER,
        audience: this.projectId,
        clockTolerance: CLOCK_TOLERANCE_S,
      });
    } catch (e) {
      HangoutsAuth.log.warn({ err: (e as Error).message }, 'a Google Chat token was refused');
      throw unauthorized(`The Bearer token could not be verified: ${(e as Error).message}.`);
    }
  }

  /** The certificate of `kid`, reading Google's certificates when needed. */
  private async certificate(kid: string): Promise<string | null> {
    const now = Date.now();
    const cached = this.certs;
    const fresh = cached !== null && now < cached.until;
    if (fresh && cached.byKid.has(kid)) return cached.byKid.get(kid)!;
    if (cached !== null && fresh && now - cached.at < UNKNOWN_KID_REFETCH_MS) return null;
    try {
      const res = await fetch(this.certsUrl, { signal: AbortSignal.timeout(this.timeoutMs) });
      if (!res.ok) throw new Error(`GET answered ${res.status}`);
      const doc = await res.json();
      const byKid = new Map<string, string>();
      for (const [k, v] of Object.entries(isJsonObject(doc) ? doc : {})) {
        if (typeof v === 'string') byKid.set(k, v);
      }
      const maxAge = /max-age=(\d+)/.exec(res.headers.get('cache-control') ?? '')?.[1];
      const ttl = maxAge !== undefined ? Number(maxAge) * 1000 : DEFAULT_CERTS_MAX_AGE_MS;
      this.certs = { byKid, until: now + ttl, at: now };
    } catch (e) {
      HangoutsAuth.log.error(
        { err: (e as Error).message },
        'the Google Chat certificates could not be read; events cannot be verified',
      );
      // Keep what was known (a rotation leaves old keys valid for a while), and ask again
      // in a minute, not on every request.
      this.certs = {
        byKid: this.certs?.byKid ?? new Map(),
        until: now + UNKNOWN_KID_REFETCH_MS,
        at: now,
      };
    }
    return this.certs?.byKid.get(kid) ?? null;
  }
}

function unauthorized(message: string): ReturnType<typeof badSignature> {
  return badSignature('hangouts', message);
}
