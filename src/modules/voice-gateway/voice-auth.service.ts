import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isUuid, NonceCache, verifyHttpSignature } from 'src/core';
import { type VoiceGatewayConfig } from './voice-credentials';
import { VOICE_CONFIG } from './voice-gateway.tokens';

export const REQUIRED_HEADERS = [
  'audiohook-organization-id',
  'audiohook-session-id',
  'audiohook-correlation-id',
  'x-api-key',
] as const;

const SIGNED_COMPONENTS = ['@request-target', '@authority', ...REQUIRED_HEADERS];
/** Signatures older than this (seconds, minus the 3 s clock skew) are refused. */
const MAX_SIGNATURE_AGE = 10;
/** Every refusal is answered no sooner than this after the request arrived (timing). */
export const AUTH_FAILURE_DELAY_MS = 500;

export type AuthOutcome =
  | {
      readonly ok: true;
      readonly sessionId: string;
      readonly organizationId: string;
      readonly correlationId: string;
    }
  | { readonly ok: false; readonly reason: string };

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Authenticates an AudioHook upgrade request before any session exists: the four headers, the API
 * key (constant time), and — with `client_secret` — the HTTP message signature with its
 * created/expires window and a nonce replay cache.
 */
@Injectable()
export class VoiceAuthService {
  private readonly logger = new Logger(VoiceAuthService.name);
  private readonly nonces = new NonceCache();
  private readonly keyDigest: Buffer;

  constructor(@Inject(VOICE_CONFIG) private readonly config: VoiceGatewayConfig) {
    this.keyDigest = digest(config.apiKey);
    if (config.clientSecret === null) {
      this.logger.warn(
        `${config.provider}.client_secret is not set: connection signatures are not verified (only the API key)`,
      );
    }
  }

  async authenticate(request: IncomingMessage, nowMs = Date.now()): Promise<AuthOutcome> {
    const outcome = this.check(request, nowMs);
    if (!outcome.ok) {
      const wait = nowMs + AUTH_FAILURE_DELAY_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.logger.warn(
        `voice connection refused: ${outcome.reason} (session ${headerOf(request, 'audiohook-session-id') ?? '-'}, organization ${headerOf(request, 'audiohook-organization-id') ?? '-'})`,
      );
    }
    return outcome;
  }

  private check(request: IncomingMessage, nowMs: number): AuthOutcome {
    const missing = REQUIRED_HEADERS.filter((h) => headerOf(request, h) === undefined);
    if (missing.length > 0) {
      return { ok: false, reason: `missing header(s): ${missing.join(', ')}` };
    }
    const apiKey = headerOf(request, 'x-api-key') ?? '';
    const keyMatches = timingSafeEqual(digest(apiKey), this.keyDigest);
    const sessionId = headerOf(request, 'audiohook-session-id') ?? '';
    const organizationId = headerOf(request, 'audiohook-organization-id') ?? '';
    const correlationId = headerOf(request, 'audiohook-correlation-id') ?? '';
    if (this.config.clientSecret !== null) {
      const signature = this.verifySignature(request, apiKey, nowMs);
      if (signature !== null) return { ok: false, reason: signature };
    }
    if (!keyMatches) return { ok: false, reason: 'invalid API key' };
    if (!isUuid(sessionId) || !isUuid(organizationId)) {
      return {
        ok: false,
        reason: 'Audiohook-Session-Id and Audiohook-Organization-Id must be UUIDs',
      };
    }
    return { ok: true, sessionId, organizationId, correlationId };
  }

  /** null when the signature is valid and fresh; otherwise why not. */
  private verifySignature(request: IncomingMessage, apiKey: string, nowMs: number): string | null {
    const secret = this.config.clientSecret;
    if (secret === null) return null;
    const now = Math.floor(nowMs / 1000);
    const verify = (authority: string | undefined) =>
      verifyHttpSignature(
        {
          method: request.method ?? 'GET',
          target: request.url ?? '/',
          headers: request.headers,
          ...(authority !== undefined ? { authority } : {}),
        },
        {
          now,
          maxSignatureAge: MAX_SIGNATURE_AGE,
          requiredComponents: SIGNED_COMPONENTS,
          keyFor: (keyid) => (keyid === this.config.apiKey ? secret : null),
          precondition: (params) => {
            if ((params.nonce ?? '').length < 22) {
              return 'signature nonce missing or shorter than 22 characters';
            }
            if (params.keyid !== apiKey) return 'signature keyid does not match X-API-KEY';
            return null;
          },
        },
      );
    let result = verify(undefined);
    // Behind a proxy the Host header may differ from what Genesys signed: try server_url too.
    if (result.code === 'FAILED' && this.config.serverUrl !== headerOf(request, 'host')) {
      result = verify(this.config.serverUrl);
    }
    if (result.code !== 'VERIFIED') {
      return `signature ${result.code.toLowerCase()}: ${result.reason}`;
    }
    const params = result.params ?? {};
    const nonce = params.nonce ?? '';
    const expiresAt = Math.min(
      params.expires ?? Infinity,
      (params.created ?? now) + MAX_SIGNATURE_AGE,
    );
    if (!this.nonces.remember(nonce, expiresAt, now)) {
      return 'signature nonce already used (replay)';
    }
    return null;
  }
}

export function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text.trim().length === 0 ? undefined : text.trim();
}
