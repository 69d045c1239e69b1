import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EmbeddedIdpHandle,
  startEmbeddedIdp,
} from 'src/modules/auth/oidc/embedded-idp/embedded-idp.launcher';
import { FIXTURES } from './create-test-app';

export const TEST_REALM = 'parley-test';
export const CLIENT_SECRET = 'external-secret-for-tests';

export interface TestIdp extends EmbeddedIdpHandle {
  /** The provider's signing keys (private JWKs), for tests that mint their own tokens. */
  readonly keys: Array<Record<string, string>>;
  close(): Promise<void>;
}

/**
 * How long one start of the provider may take before the test starts another. It is ready in
 * about half a second here, and in a few seconds on a loaded machine; very rarely (once in
 * some thousands of starts, cause unknown) a started provider never reports ready, where a
 * second start succeeds.
 */
const IDP_START_TIMEOUT_MS = 30_000;

/** The embedded provider (its own process) with the test realm on a free port. */
export async function startTestIdp(): Promise<TestIdp> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-idp-'));
  const keysFile = join(dir, 'keys.json');
  const start = (): Promise<EmbeddedIdpHandle> =>
    startEmbeddedIdp({
      realm: TEST_REALM,
      realmFile: join(FIXTURES, 'oidc', 'test-realm.json'),
      keysFile,
      port: 0,
      env: { ...process.env, PARLEY_TEST_CLIENT_SECRET: CLIENT_SECRET },
      readyTimeoutMs: IDP_START_TIMEOUT_MS,
    });
  const idp = await start().catch((error: Error) => {
    process.stderr.write(`test identity provider: ${error.message}; starting it once more\n`);
    return start();
  });
  const keys = (
    JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: Array<Record<string, string>> }
  ).keys;
  return {
    ...idp,
    keys,
    close: async () => {
      await idp.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Client-credentials grant over HTTP, as the specification describes (form-encoded). */
export async function fetchToken(
  idp: EmbeddedIdpHandle,
  clientId = 'parley-external',
  clientSecret = CLIENT_SECRET,
): Promise<string> {
  const response = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  const body = (await response.json()) as { access_token?: string };
  if (response.status !== 200 || typeof body.access_token !== 'string') {
    throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
  }
  return body.access_token;
}

export interface GraphqlResponse {
  status: number;
  body: {
    data?: Record<string, unknown> | null;
    errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
  };
  headers: Headers;
}

/** POST /api/graphql as the specification's clients do: JSON body `{query, variables}`. */
export async function graphql(
  baseUrl: string,
  token: string | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GraphqlResponse> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`${baseUrl}/api/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    body: (await response.json()) as GraphqlResponse['body'],
    headers: response.headers,
  };
}
