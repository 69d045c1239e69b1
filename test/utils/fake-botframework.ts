import { sign } from 'jsonwebtoken';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type FakePlatform, type PlatformCall, startFakePlatform } from 'test/utils/fake-platform';

/** The paths of the fake, as Microsoft names them. */
export const BF_METADATA_PATH = '/v1/.well-known/openidconfiguration';
export const BF_KEYS_PATH = '/v1/.well-known/keys';
export const BF_TOKEN_PATH = '/botframework.com/oauth2/v2.0/token';

/** A signing key of the fake: its id, the private half and the channels it is endorsed for. */
interface FakeKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly endorsements: readonly string[];
}

function newKey(kid: string, endorsements: readonly string[]): FakeKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, publicKey, endorsements };
}

/**
 * A stand-in for Microsoft's side of the Bot Framework, from "Authentication with the Bot
 * Connector API" and the Bot Connector REST reference, as one real HTTP server:
 *
 * - `GET /v1/.well-known/openidconfiguration`: the OpenID metadata (issuer, `jwks_uri`, RS256);
 * - `GET /v1/.well-known/keys`: the JWKS, each key with its `endorsements`;
 * - `POST /botframework.com/oauth2/v2.0/token`: client credentials → a bearer token
 *   (`expires_in` 3600), counted in `tokenCalls`;
 * - `POST /v3/conversations/{id}/activities`: records the bot's activity, answers its id;
 *   the same server is the activities' `serviceUrl`.
 *
 * `token(claims)` signs what the Bot Connector would send (issuer, audience, serviceUrl,
 * validity); tests override claims or the key to forge bad ones.
 */
export interface FakeBotFramework {
  readonly platform: FakePlatform;
  readonly url: string;
  /** The key the fake publishes (endorsed for `msteams` and `emulator`). */
  readonly key: FakeKey;
  /** The Bot Connector's token for `appId`, with `claims` on top (undefined values removed). */
  token(appId: string, claims?: Record<string, unknown>, key?: FakeKey): string;
  /** A key the fake does not publish (same kid as the real one or another). */
  foreignKey(kid: string): FakeKey;
  /** The activities posted to one conversation, oldest first. */
  activities(conversationId: string): PlatformCall[];
  tokenCalls(): PlatformCall[];
  close(): Promise<void>;
}

export async function startFakeBotFramework(): Promise<FakeBotFramework> {
  const key = newKey('bf-key-1', ['msteams', 'emulator', 'webchat']);
  let count = 0;
  const platform = await startFakePlatform(() => ({ status: 404, body: { error: 'not found' } }));
  const url = platform.url;
  platform.reply = (call) => {
    if (call.method === 'GET' && call.path === BF_METADATA_PATH) {
      return {
        body: {
          issuer: 'https://api.botframework.com',
          authorization_endpoint: 'https://invalid.botframework.com',
          jwks_uri: `${url}${BF_KEYS_PATH}`,
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['private_key_jwt'],
        },
      };
    }
    if (call.method === 'GET' && call.path === BF_KEYS_PATH) {
      const jwk = key.publicKey.export({ format: 'jwk' });
      return {
        body: {
          keys: [{ ...jwk, kty: 'RSA', use: 'sig', kid: key.kid, endorsements: key.endorsements }],
        },
      };
    }
    if (call.method === 'POST' && call.path === BF_TOKEN_PATH) {
      count += 1;
      return {
        body: {
          token_type: 'Bearer',
          expires_in: 3600,
          ext_expires_in: 3600,
          access_token: `bf-access-token-${count}`,
        },
      };
    }
    const activity = /^\/v3\/conversations\/([^/]+)\/activities$/.exec(call.path);
    if (call.method === 'POST' && activity !== null) {
      return { body: { id: `activity-${platform.calls.length}` } };
    }
    return { status: 404, body: { error: { code: 'NotFound', message: call.path } } };
  };
  return {
    platform,
    url,
    key,
    token(appId, claims = {}, signer = key) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = {
        iss: 'https://api.botframework.com',
        aud: appId,
        serviceUrl: `${url}/`,
        nbf: now - 10,
        exp: now + 3600,
        ...claims,
      };
      for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
      return sign(payload, signer.privateKey, { algorithm: 'RS256', keyid: signer.kid });
    },
    foreignKey: (kid) => newKey(kid, key.endorsements),
    activities: (conversationId) =>
      platform.calls.filter(
        (c) => c.path === `/v3/conversations/${encodeURIComponent(conversationId)}/activities`,
      ),
    tokenCalls: () => platform.calls.filter((c) => c.path === BF_TOKEN_PATH),
    close: () => platform.close(),
  };
}
