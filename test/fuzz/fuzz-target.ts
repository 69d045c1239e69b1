import fc from 'fast-check';
import { sign } from 'jsonwebtoken';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { AudioHookClient } from 'test/utils/audiohook-client';
import { MOODBOT, trainBot } from 'test/utils/bots';
import { fetchToken, startTestIdp, type TestIdp } from 'test/utils/oidc';
import type { GraphqlCase } from './graphql-arbitraries';
import {
  casesRun,
  FUZZ_SEED,
  fuzzParams,
  type FuzzServer,
  type KeepAliveClient,
  NoAnswer,
  rawRequest,
  type RawResponse,
  startFuzzServer,
} from './harness';
import { bodyBytes, encode, pathId, type RestCase } from './rest-arbitraries';

/**
 * The server under fuzz and the invariants the fuzz specs hold it to (test/fuzz/README.md):
 * a `parley run` process of its own serving the mood bot with REST token and JWT auth, the rest,
 * socketio and genesys channels and GraphQL behind a test identity provider. Used by the quick
 * suite (server.fuzz-spec.ts) and the long run of the fault suite (test/faults).
 */

export const AUTH_TOKEN = 'fuzz-token';
const JWT_SECRET = 'fuzz-jwt-secret-0123456789abcdef';
export const API_KEY = 'RnV6ekFwaUtleUZvclRoZVZvaWNlR2F0ZXdheQ==';
export const VOICE_SECRET = 'RnV6elNlY3JldEZvclRoZVZvaWNlR2F0ZXdheTEyMzQ=';
/** Bound of one exchange: past it the server "hangs" (training a model may take seconds). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The channels under fuzz: every messaging and voice connector too, their platforms' APIs at a
 * closed local port (a call fails at once and is logged). Some keep the secret they are checked
 * with (requests fail their signature), some have none, as entries copied from Rasa, so random
 * bodies reach their parsers and run turns.
 */
const DEAD_API = 'http://127.0.0.1:9';
const CREDENTIALS = `
rest:
socketio:
  session_persistence: true
slack: { slack_token: xoxb-fuzz, slack_signing_secret: fuzz-secret, api_url: '${DEAD_API}' }
telegram:
  { access_token: '1:fuzz', verify: fuzz_bot, secret_token: fuzz-secret, api_url: '${DEAD_API}' }
facebook: { verify: fuzz, secret: fuzz-secret, page-access-token: fuzz, api_url: '${DEAD_API}' }
twilio: { account_sid: ACfuzz, auth_token: fuzz, twilio_number: '+15005550006', api_url: '${DEAD_API}' }
twilio_voice: { assistant_voice: woman }
botframework:
  app_id: fuzz
  app_password: fuzz
  openid_metadata_url: '${DEAD_API}/openid'
  login_url: '${DEAD_API}/token'
webexteams: { access_token: fuzz, api_url: '${DEAD_API}' }
hangouts: { hangouts_user_added_intent_name: /greet }
mattermost: { url: '${DEAD_API}/api/v4', token: fuzz, webhook_url: 'http://127.0.0.1:9/hook' }
rocketchat: { user: fuzz, password: fuzz, server_url: '${DEAD_API}' }
audiocodes: { token: fuzz-token, use_websocket: false }
jambonz:
genesys:
  api_key: ${API_KEY}
  client_secret: ${VOICE_SECRET}
  server_url: localhost:5005
  asr: { name: pocketsphinx }
  tts: { name: espeak-ng }
`;

/** The running server (set by startFuzzTarget). */
export let server: FuzzServer;
let idp: TestIdp | undefined;
let oidcToken: string;
let dir: string | undefined;
let serverEnv: NodeJS.ProcessEnv;
/** The trained models directory the server loaded. */
export let models: string;
/**
 * The mood bot's model archive in `models`: what to load again after fuzzing (POST /model/train
 * may have saved newer models of random data next to it).
 */
export let modelFile: string;
const restJwt = sign({ user: { username: 'fuzz', role: 'admin' } }, JWT_SECRET);

export function describeFailure(what: string): string {
  return `${what}\n(seed ${FUZZ_SEED}: replay with FUZZ_SEED=${FUZZ_SEED}; server ${server.exited() ?? 'alive'})`;
}

/**
 * Runs one property: `runs` cases times FUZZ_RUNS, or `{ exactly }` cases. With FUZZ_KEEP_GOING=1
 * a failing case does not end the run: the distinct failures (up to the first 100 characters of
 * their message) are all listed at the end.
 */
export async function holds<T>(
  arb: fc.Arbitrary<T>,
  check: (value: T) => Promise<void>,
  runs: number | { readonly exactly: number },
): Promise<void> {
  const keepGoing = process.env.FUZZ_KEEP_GOING === '1';
  const found = new Map<string, string>();
  const wrapped = async (value: T): Promise<void> => {
    try {
      await check(value);
    } catch (e) {
      if (!keepGoing || server.exited() !== null) throw e;
      const message = (e as Error).message;
      const key = message.replace(/[0-9a-f-]{36}|\d+/g, '#').slice(0, 100);
      if (!found.has(key)) found.set(key, message.slice(0, 800));
    }
  };
  try {
    const params =
      typeof runs === 'number' ? fuzzParams(runs) : { ...fuzzParams(1), numRuns: runs.exactly };
    await fc.assert(fc.asyncProperty(arb, wrapped), params);
  } catch (e) {
    throw new Error(describeFailure((e as Error).message));
  }
  if (found.size > 0) {
    throw new Error(
      describeFailure(`${found.size} distinct failures:\n${[...found.values()].join('\n---\n')}`),
    );
  }
}

/** The process must still run: a crash of any kind fails the property at the case that did it. */
export function assertAlive(): void {
  const exit = server.exited();
  if (exit !== null) {
    throw new Error(`the server process exited (${exit}):\n${server.output().slice(-3000)}`);
  }
}

export function preview(body: Buffer): string {
  return JSON.stringify(body.subarray(0, 300).toString('utf8'));
}

/** Rasa's failure body with `code` equal to the HTTP status. */
export function assertFailureBody(res: RawResponse, where: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new Error(`${where}: ${res.status} without a JSON failure body: ${preview(res.body)}`);
  }
  const b = parsed as Record<string, unknown>;
  const ok =
    typeof b === 'object' &&
    b !== null &&
    typeof b.version === 'string' &&
    b.status === 'failure' &&
    typeof b.reason === 'string' &&
    typeof b.message === 'string' &&
    b.code === res.status;
  if (!ok) {
    throw new Error(`${where}: ${res.status} with a malformed failure body: ${preview(res.body)}`);
  }
}

/**
 * Sends one raw request: over a fresh connection (closed after the answer), or over one of
 * `client`'s kept-alive connections (then `head` must not ask for a close). A missing answer is a
 * "hang" failure.
 */
export async function exchange(
  head: string | Buffer,
  body: Buffer,
  where: string,
  client?: { readonly connections: KeepAliveClient; readonly method: string },
): Promise<RawResponse> {
  const bytes = typeof head === 'string' ? Buffer.from(head, 'latin1') : head;
  try {
    return client === undefined
      ? await rawRequest(server.port, bytes, body, REQUEST_TIMEOUT_MS)
      : await client.connections.send(bytes, body, client.method);
  } catch (e) {
    if (e instanceof NoAnswer) throw new Error(`${where}: ${e.message}`);
    throw e;
  }
}

export function restHead(
  c: RestCase,
  bodyLength: number,
  keepAlive = false,
): { head: string; where: string } {
  const id = pathId(c.id);
  const path = c.route.path
    .replace('{id}', id)
    .replace('{name}', id)
    .replace('{file}', id)
    .replace(':conversation_id', id);
  const query = [
    c.query,
    c.auth === 'token' ? `token=${AUTH_TOKEN}` : c.auth === 'wrong-token' ? 'token=nope' : '',
  ]
    .filter(Boolean)
    .join('&');
  const target = query ? `${path}?${query}` : path;
  const lines = [
    `${c.method} ${target} HTTP/1.1`,
    `Host: 127.0.0.1:${server.port}`,
    keepAlive ? 'Connection: keep-alive' : 'Connection: close',
    `Content-Length: ${bodyLength}`,
  ];
  if (c.contentType !== null) lines.push(`Content-Type: ${c.contentType}`);
  if (c.accept !== null) lines.push(`Accept: ${c.accept}`);
  if (c.auth === 'jwt') lines.push(`Authorization: Bearer ${restJwt}`);
  if (c.auth === 'garbage-jwt') lines.push('Authorization: Bearer eyJhbGciOiJub25lIn0.e30.');
  if (c.auth === 'basic') lines.push('Authorization: Basic Zm9vOmJhcg==');
  return {
    head: `${lines.join('\r\n')}\r\n\r\n`,
    where: `${c.method} ${target.length > 300 ? `${target.slice(0, 300)}… (${target.length} chars)` : target} [${c.contentType ?? 'no content-type'}, ${bodyLength} bytes of ${c.body.kind}]`,
  };
}

/**
 * The REST invariant: an answer, no 5xx, and every 4xx in Rasa's failure body. Sent over a fresh
 * connection, or over `connections` kept alive (then `held` gets the exchange's milliseconds
 * once the invariant held).
 */
export async function checkRest(
  c: RestCase,
  connections?: KeepAliveClient,
  held?: (ms: number) => void,
): Promise<void> {
  casesRun.count++;
  const body = bodyBytes(c.body);
  const { head, where } = restHead(c, body.length, connections !== undefined);
  const res = await exchange(head, body, where, connections && { connections, method: c.method });
  assertAlive();
  if (res.status >= 500) throw new Error(`${where}: ${res.status} ${preview(res.body)}`);
  if (res.status >= 400 && c.method !== 'HEAD') assertFailureBody(res, where);
  held?.(res.ms ?? 0);
}

export const SIMPLE_ID = fc.stringMatching(/^[a-z0-9_-]{1,24}$/);

/**
 * Sends a GraphQL case with fetch, or over `connections` kept alive (the same request written
 * out by hand).
 */
export async function gqlRequest(
  c: GraphqlCase,
  connections?: KeepAliveClient,
): Promise<{ status: number; text: string; ms?: number }> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (c.auth === 'token') headers.Authorization = `Bearer ${oidcToken}`;
  if (c.auth === 'garbage') headers.Authorization = 'Bearer not.a.jwt';
  const envelope: Record<string, unknown> = { query: c.query, variables: c.variables };
  if (c.operationName !== null) envelope.operationName = c.operationName;
  let init: RequestInit;
  let url = `${server.base}/api/graphql`;
  switch (c.envelope) {
    case 'object':
      init = { method: 'POST', headers, body: JSON.stringify(envelope) };
      break;
    case 'batch':
      init = { method: 'POST', headers, body: JSON.stringify([envelope, envelope]) };
      break;
    case 'query-not-string':
      init = { method: 'POST', headers, body: JSON.stringify({ query: c.variables }) };
      break;
    case 'no-query':
      init = { method: 'POST', headers, body: JSON.stringify({ variables: c.variables }) };
      break;
    case 'text-plain':
      init = {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'text/plain' },
        body: JSON.stringify(envelope),
      };
      break;
    case 'get':
      url += `?query=${encode(c.query)}&variables=${encode(JSON.stringify(c.variables) ?? '')}`;
      init = { method: 'GET', headers: { ...headers, 'apollo-require-preflight': 'true' } };
      break;
  }
  if (connections !== undefined) {
    const method = init.method as string;
    const body = Buffer.from(typeof init.body === 'string' ? init.body : '');
    const head = [
      `${method} ${url.slice(server.base.length)} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      ...Object.entries(init.headers as Record<string, string>).map(([k, v]) => `${k}: ${v}`),
      ...(method === 'GET' ? [] : [`Content-Length: ${body.length}`]),
    ].join('\r\n');
    const res = await connections.send(Buffer.from(`${head}\r\n\r\n`, 'latin1'), body, method);
    return { status: res.status, text: res.body.toString('utf8'), ms: res.ms };
  }
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: response.status, text: await response.text() };
}

/**
 * GraphQL invariant: no 5xx, every error carries extensions.code, never INTERNAL_SERVER_ERROR.
 * Sent with fetch, or over `connections` kept alive (then `held` gets the exchange's
 * milliseconds once the invariant held).
 */
export async function checkGraphql(
  c: GraphqlCase,
  connections?: KeepAliveClient,
  held?: (ms: number) => void,
): Promise<void> {
  casesRun.count++;
  const where = `GraphQL ${c.envelope} (${c.auth}) ${JSON.stringify(c.query.slice(0, 300))} variables ${JSON.stringify(c.variables)?.slice(0, 200)}`;
  let res: { status: number; text: string; ms?: number };
  try {
    res = await gqlRequest(c, connections);
  } catch (e) {
    throw new Error(`${where}: no answer (${(e as Error).message})`);
  }
  assertAlive();
  if (res.status >= 500) throw new Error(`${where}: ${res.status} ${res.text.slice(0, 300)}`);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    throw new Error(
      `${where}: ${res.status} with a body that is not JSON: ${res.text.slice(0, 300)}`,
    );
  }
  const bodies = Array.isArray(body) ? body : [body];
  for (const b of bodies as Array<Record<string, unknown>>) {
    if (b?.status === 'failure') {
      // A request that never reached GraphQL (unreadable body): Rasa's failure body.
      assertFailureBody({ status: res.status, headers: {}, body: Buffer.from(res.text) }, where);
      continue;
    }
    const errors = b?.errors;
    if (res.status >= 400 && !Array.isArray(errors)) {
      throw new Error(`${where}: ${res.status} without GraphQL errors: ${res.text.slice(0, 300)}`);
    }
    if (!Array.isArray(errors)) continue;
    for (const e of errors as Array<{ extensions?: { code?: unknown } }>) {
      const code = e?.extensions?.code;
      if (typeof code !== 'string' || code === 'INTERNAL_SERVER_ERROR') {
        throw new Error(
          `${where}: error without a client code: ${JSON.stringify(e).slice(0, 400)}`,
        );
      }
    }
  }
  held?.(res.ms ?? 0);
}

export function connectSocket(): Socket {
  return io(server.base, {
    path: '/socket.io',
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
  });
}

/** Resolves with the first payload of `event`, or rejects after `ms`. */
export function nextEvent(socket: Socket, event: string, ms = 15_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${event}" within ${ms} ms`)), ms);
    socket.once(event, (payload: unknown) => {
      clearTimeout(timer);
      resolve(payload);
    });
  });
}

/** A well-formed socket.io client: a session, then "hi" gets the moodbot's greeting. */
export async function socketioStillServes(): Promise<void> {
  const socket = connectSocket();
  try {
    const sessionId = `fuzz-ok-${Math.random().toString(36).slice(2)}`;
    const confirmed = nextEvent(socket, 'session_confirm');
    socket.emit('session_request', { session_id: sessionId });
    expect(await confirmed).toBe(sessionId);
    const reply = nextEvent(socket, 'bot_uttered');
    socket.emit('user_uttered', { message: '/greet', session_id: sessionId });
    expect(await reply).toMatchObject({ text: 'Hi there! How is your day going?' });
  } finally {
    socket.close();
  }
}

export const voiceUrl = (): string => `ws://127.0.0.1:${server.port}/webhooks/genesys/websocket`;

/** A well-formed AudioHook session: open → opened, close → closed. */
export async function voiceStillServes(): Promise<void> {
  const client = await AudioHookClient.connect({
    url: voiceUrl(),
    apiKey: API_KEY,
    clientSecret: VOICE_SECRET,
  });
  try {
    client.open();
    await client.waitForType('opened');
    client.send('close', { reason: 'end' });
    await client.waitForType('closed');
    expect(client.violations).toEqual([]);
  } finally {
    client.close();
  }
}

/** Trains the mood bot, starts the identity provider and the server (`logLevel` of its log). */
export async function startFuzzTarget(
  logLevel = 'error',
  options: { inspect?: boolean } = {},
): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'parley-fuzz-'));
  models = trainBot(MOODBOT, join(dir, 'models'));
  modelFile = join(models, readdirSync(models).find((f) => f.endsWith('.tar.gz')) as string);
  const credentials = join(dir, 'credentials.yml');
  writeFileSync(credentials, CREDENTIALS);
  idp = await startTestIdp();
  oidcToken = await fetchToken(idp);
  serverEnv = {
    ...process.env,
    PARLEY_AUTH_TOKEN: AUTH_TOKEN,
    JWT_SECRET,
    PARLEY_MODEL: models,
    PARLEY_CREDENTIALS: credentials,
    PARLEY_SERVE_MODELS: 'true',
    PARLEY_DATA_DIR: join(dir, 'data'),
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_EMBEDDED: 'false',
  };
  server = await startFuzzServer(['--enable-api'], { ...serverEnv, LOG_LEVEL: logLevel }, options);
}

/**
 * A second server like the one under fuzz (same model, credentials and auth) with its own log
 * level, e.g. `debug` to read the routes Nest maps at start.
 */
export function startLikeFuzzTarget(logLevel: string): Promise<FuzzServer> {
  return startFuzzServer(['--enable-api'], {
    ...serverEnv,
    LOG_LEVEL: logLevel,
    PARLEY_DATA_DIR: join(dir as string, `data-${logLevel}`),
  });
}

export async function stopFuzzTarget(): Promise<void> {
  await server?.stop();
  await idp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
