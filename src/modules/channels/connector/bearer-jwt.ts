import { decode, type Jwt } from 'jsonwebtoken';
import { badSignature } from './connector';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Longest token accepted; the platforms' are 1-2 KB. */
const MAX_TOKEN_LENGTH = 16 * 1024;

/** A bearer JWT read (not yet verified) from an Authorization header. */
export interface BearerJwt {
  readonly token: string;
  readonly decoded: Jwt & { header: { kid: string } };
}

/**
 * Reads the `Authorization: Bearer <JWT>` of a platform that signs its requests with a token
 * (Bot Framework, Google Chat): the token, bounded in length, decoded with its header, which
 * must name its signing key (`kid`). Anything else is `channel`'s 401 failure body. The caller
 * verifies the signature and claims.
 */
export function readBearerJwt(channel: string, authorization: string | undefined): BearerJwt {
  const token = BEARER.exec(authorization ?? '')?.[1];
  if (token === undefined) {
    throw badSignature(channel, 'The request carries no Bearer token in its Authorization header.');
  }
  if (token.length > MAX_TOKEN_LENGTH) {
    throw badSignature(channel, `The Bearer token is longer than ${MAX_TOKEN_LENGTH} characters.`);
  }
  const decoded = decode(token, { complete: true });
  if (
    decoded === null ||
    typeof decoded.payload === 'string' ||
    typeof decoded.header.kid !== 'string'
  ) {
    throw badSignature(channel, 'The Bearer token is not a JWT naming its signing key (kid).');
  }
  return { token, decoded: decoded as BearerJwt['decoded'] };
}
