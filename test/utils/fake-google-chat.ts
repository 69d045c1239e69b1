import { sign } from 'jsonwebtoken';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakePlatform, startFakePlatform } from 'test/utils/fake-platform';

/** The path of Google Chat's signing certificates, as Google publishes them. */
export const GOOGLE_CHAT_CERTS_PATH =
  '/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com';

/** A signing key: its id, the private key (PEM) and its self-signed x509 certificate (PEM). */
export interface GoogleChatKey {
  readonly kid: string;
  readonly privateKey: string;
  readonly certificate: string;
}

/** A new RSA key and x509 certificate, made with the openssl command (Node cannot make certificates). */
export function googleChatKey(kid: string): GoogleChatKey {
  const dir = mkdtempSync(join(tmpdir(), 'parley-google-chat-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=chat@system.gserviceaccount.com',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    return {
      kid,
      privateKey: readFileSync(keyFile, 'utf8'),
      certificate: readFileSync(certFile, 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A stand-in for Google's certificate endpoint of Google Chat ("Verify requests from Google
 * Chat"): `GET /service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com` answers
 * `{<kid>: <x509 PEM>}` with a `Cache-Control: max-age`, as Google does. `token(claims)` signs
 * what Google Chat would send with an event (issuer chat@system.gserviceaccount.com, audience
 * the project number, an hour of validity).
 */
export interface FakeGoogleChat {
  readonly platform: FakePlatform;
  readonly url: string;
  readonly key: GoogleChatKey;
  token(audience: string, claims?: Record<string, unknown>, key?: GoogleChatKey): string;
  close(): Promise<void>;
}

export async function startFakeGoogleChat(): Promise<FakeGoogleChat> {
  const key = googleChatKey('google-chat-key-1');
  const platform = await startFakePlatform((call) =>
    call.method === 'GET' && call.path === GOOGLE_CHAT_CERTS_PATH
      ? {
          headers: { 'cache-control': 'public, max-age=21600, must-revalidate, no-transform' },
          body: { [key.kid]: key.certificate },
        }
      : { status: 404, body: { error: 'not found' } },
  );
  return {
    platform,
    url: platform.url,
    key,
    token(audience, claims = {}, signer = key) {
      const now = Math.floor(Date.now() / 1000);
      const payload: Record<string, unknown> = {
        iss: 'chat@system.gserviceaccount.com',
        aud: audience,
        iat: now - 5,
        exp: now + 3600,
        ...claims,
      };
      for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
      return sign(payload, signer.privateKey, { algorithm: 'RS256', keyid: signer.kid });
    },
    close: () => platform.close(),
  };
}
