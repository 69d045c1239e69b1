import { Logger } from '@nestjs/common';
import { type Algorithm, type JwtPayload, verify } from 'jsonwebtoken';
import { JwksClient } from 'jwks-rsa';
import { DialogueError } from 'src/core';
import { isJsonObject } from 'src/core/events/json-values';
import { readBearerJwt } from 'src/modules/channels/connector/bearer-jwt';
import { badSignature } from 'src/modules/channels/connector/connector';

/** The issuer of every token the Bot Connector service sends to a bot. */
export const BOTFRAMEWORK_ISSUER = 'https://api.botframework.com';

/** Clock skew Microsoft asks bots to allow when checking a token's validity period. */
const CLOCK_TOLERANCE_S = 5 * 60;

/** How long the OpenID metadata (the `jwks_uri`) is kept before it is read again. */
const METADATA_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** How long a signing key (and its endorsements) is kept: Microsoft's SDK keeps them days. */
const KEY_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** The claims a verified token carries that the activity must then agree with. */
export interface VerifiedToken {
  readonly serviceUrl: string | null;
  /** The channels the signing key is endorsed for; null when the key lists none. */
  readonly endorsements: readonly string[] | null;
}

interface Metadata {
  readonly jwksUri: string;
  readonly algorithms: readonly string[];
  readonly at: number;
}

/**
 * Checks the `Authorization: Bearer <JWT>` of a request from the Bot Connector service as
 * Microsoft's "Authentication with the Bot Connector API" asks: the OpenID metadata names the
 * key set (`jwks_uri`), the token's `kid` names its key, the signature is RS256 (an algorithm
 * the metadata lists), the issuer is `https://api.botframework.com`, the audience is the app
 * id, and the validity period holds with 5 minutes of clock skew. The metadata and the keys
 * (with their `endorsements`, which jwks-rsa does not keep) are cached for a day; a token
 * naming an unknown key reads the key set again, at most 10 times a minute. Every failure is a
 * 401 failure body; the activity checks (`serviceUrl`, endorsements) are `checkActivity`.
 */
export class BotFrameworkAuth {
  private static readonly log = new Logger('Connector[botframework]');
  private metadata: Metadata | null = null;
  private jwks: JwksClient | null = null;
  private readonly endorsements = new Map<string, readonly string[]>();

  constructor(
    private readonly appId: string,
    private readonly metadataUrl: string,
    private readonly timeoutMs: number,
  ) {}

  /** Verifies the header's token; throws a 401 failure body when it is not one to trust. */
  async verify(authorization: string | undefined): Promise<VerifiedToken> {
    const { token, decoded } = readBearerJwt('botframework', authorization);
    const { kid, alg } = decoded.header;
    const metadata = await this.readMetadata();
    if (!metadata.algorithms.includes(alg)) {
      throw unauthorized(`The token is signed with ${alg}, not an algorithm of the Bot Connector.`);
    }
    const key = await this.signingKey(metadata, kid);
    let payload: JwtPayload;
    try {
      payload = verify(token, key, {
        algorithms: metadata.algorithms as Algorithm[],
        issuer: BOTFRAMEWORK_ISSUER,
        audience: this.appId,
        clockTolerance: CLOCK_TOLERANCE_S,
        complete: false,
      }) as JwtPayload;
    } catch (e) {
      BotFrameworkAuth.log.warn({ err: (e as Error).message }, 'a Bot Framework token was refused');
      throw unauthorized(`The Bearer token could not be verified: ${(e as Error).message}.`);
    }
    if (typeof payload.exp !== 'number') {
      throw unauthorized('The Bearer token has no expiry (exp).');
    }
    return {
      serviceUrl: typeof payload.serviceUrl === 'string' ? payload.serviceUrl : null,
      endorsements: this.endorsements.get(kid) ?? null,
    };
  }

  /**
   * The activity must agree with its token: the token's `serviceUrl` claim is the activity's
   * `serviceUrl` (so replies only ever go where Microsoft said, 401 otherwise), and a key
   * endorsed for some channels must be endorsed for the activity's `channelId` (403, as
   * Microsoft documents).
   */
  static checkActivity(token: VerifiedToken, activity: Record<string, unknown>): void {
    if (token.serviceUrl === null || token.serviceUrl !== activity.serviceUrl) {
      throw unauthorized("The token's serviceUrl claim is not the activity's serviceUrl.");
    }
    const channelId = activity.channelId;
    if (
      token.endorsements !== null &&
      typeof channelId === 'string' &&
      channelId !== '' &&
      !token.endorsements.includes(channelId)
    ) {
      throw new DialogueError(
        'AUTH.NOT_AUTHORIZED',
        `The token's signing key is not endorsed for the channel "${channelId}".`,
        { channel: 'botframework' },
      );
    }
  }

  private async readMetadata(): Promise<Metadata> {
    if (this.metadata !== null && Date.now() - this.metadata.at < METADATA_MAX_AGE_MS) {
      return this.metadata;
    }
    let doc: unknown;
    try {
      doc = await this.getJson(this.metadataUrl);
    } catch (e) {
      if (this.metadata !== null) return this.metadata; // keep the last known one
      BotFrameworkAuth.log.error(
        { err: (e as Error).message },
        'the Bot Framework OpenID metadata could not be read; requests cannot be verified',
      );
      throw unauthorized('The Bot Connector keys are not available to verify the token.');
    }
    const meta = isJsonObject(doc) ? doc : {};
    const jwksUri = meta.jwks_uri;
    if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri)) {
      throw unauthorized('The Bot Connector keys are not available to verify the token.');
    }
    const algs = meta.id_token_signing_alg_values_supported;
    const algorithms = (Array.isArray(algs) ? algs : ['RS256']).filter(
      (a): a is string => typeof a === 'string' && /^RS(256|384|512)$/.test(a),
    );
    if (this.metadata?.jwksUri !== jwksUri || this.jwks === null) {
      this.jwks = new JwksClient({
        jwksUri,
        cache: true,
        cacheMaxAge: KEY_MAX_AGE_MS,
        rateLimit: true,
        jwksRequestsPerMinute: 10,
        timeout: this.timeoutMs,
        fetcher: (uri) => this.fetchKeys(uri),
      });
    }
    this.metadata = {
      jwksUri,
      algorithms: algorithms.length > 0 ? algorithms : ['RS256'],
      at: Date.now(),
    };
    return this.metadata;
  }

  private async signingKey(metadata: Metadata, kid: string): Promise<string> {
    try {
      const key = await this.jwks!.getSigningKey(kid);
      return key.getPublicKey();
    } catch (e) {
      BotFrameworkAuth.log.warn(
        { kid, jwks_uri: metadata.jwksUri, err: (e as Error).message },
        'no Bot Connector signing key for a token',
      );
      throw unauthorized(`The token's signing key "${kid}" is not a key of the Bot Connector.`);
    }
  }

  /** Reads the key set, keeping each key's endorsements (the channels it may sign for). */
  private async fetchKeys(uri: string): Promise<{ keys: unknown[] }> {
    const doc = await this.getJson(uri);
    const keys = isJsonObject(doc) && Array.isArray(doc.keys) ? doc.keys : [];
    for (const key of keys) {
      if (!isJsonObject(key) || typeof key.kid !== 'string') continue;
      const endorsements = key.endorsements;
      if (Array.isArray(endorsements)) {
        this.endorsements.set(
          key.kid,
          endorsements.filter((e): e is string => typeof e === 'string'),
        );
      } else {
        this.endorsements.delete(key.kid);
      }
    }
    return { keys };
  }

  private async getJson(url: string): Promise<unknown> {
    const res = await fetch(url, { signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`GET answered ${res.status}`);
    return await res.json();
  }
}

function unauthorized(message: string): DialogueError {
  return badSignature('botframework', message);
}
