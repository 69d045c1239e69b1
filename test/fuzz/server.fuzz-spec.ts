import fc from 'fast-check';
import { sign } from 'jsonwebtoken';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { AudioHookClient } from 'test/utils/audiohook-client';
import { MOODBOT, trainBot } from 'test/utils/bots';
import { fetchToken, startTestIdp, type TestIdp } from 'test/utils/oidc';
import WebSocket from 'ws';
import { type GraphqlCase, graphqlCase } from './graphql-arbitraries';
import {
  casesRun,
  FUZZ_SEED,
  fuzzParams,
  type FuzzServer,
  NoAnswer,
  rawRequest,
  type RawResponse,
  sleep,
  startFuzzServer,
} from './harness';
import {
  bodyBytes,
  deepJson,
  encode,
  oddId,
  type PathId,
  pathId,
  type RestCase,
  restCase,
} from './rest-arbitraries';

/**
 * Robustness guarantees of the whole server, held by property-based fuzzing against a real
 * `parley run` process (a crash is an exit we can see): hostile input gets a clear 4xx failure
 * body or a GraphQL error with a code, never a 5xx, a hang or a process exit, and the server
 * keeps serving well-formed clients afterwards. See test/fuzz/README.md.
 */

const AUTH_TOKEN = 'fuzz-token';
const JWT_SECRET = 'fuzz-jwt-secret-0123456789abcdef';
const API_KEY = 'RnV6ekFwaUtleUZvclRoZVZvaWNlR2F0ZXdheQ==';
const VOICE_SECRET = 'RnV6elNlY3JldEZvclRoZVZvaWNlR2F0ZXdheTEyMzQ=';
/** Bound of one exchange: past it the server "hangs" (training a model may take seconds). */
const REQUEST_TIMEOUT_MS = 30_000;
/** Leak check: RSS after the run and a settle, against the baseline before it. */
const RSS_MARGIN_BYTES = 150 * 1024 * 1024;

const CREDENTIALS = `
rest:
socketio:
  session_persistence: true
genesys:
  api_key: ${API_KEY}
  client_secret: ${VOICE_SECRET}
  server_url: localhost:5005
  asr: { name: pocketsphinx }
  tts: { name: espeak-ng }
`;

let server: FuzzServer;
let idp: TestIdp;
let oidcToken: string;
let dir: string;
let models: string;
let rssBefore = 0;
const restJwt = sign({ user: { username: 'fuzz', role: 'admin' } }, JWT_SECRET);

function describeFailure(what: string): string {
  return `${what}\n(seed ${FUZZ_SEED}: replay with FUZZ_SEED=${FUZZ_SEED}; server ${server.exited() ?? 'alive'})`;
}

/**
 * Runs one property. With FUZZ_KEEP_GOING=1 a failing case does not end the run: the distinct
 * failures (up to the first 100 characters of their message) are all listed at the end.
 */
async function holds<T>(
  arb: fc.Arbitrary<T>,
  check: (value: T) => Promise<void>,
  baseRuns: number,
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
    await fc.assert(fc.asyncProperty(arb, wrapped), fuzzParams(baseRuns));
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
function assertAlive(): void {
  const exit = server.exited();
  if (exit !== null) {
    throw new Error(`the server process exited (${exit}):\n${server.output().slice(-3000)}`);
  }
}

function preview(body: Buffer): string {
  return JSON.stringify(body.subarray(0, 300).toString('utf8'));
}

/** Rasa's failure body with `code` equal to the HTTP status. */
function assertFailureBody(res: RawResponse, where: string): void {
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

/** Sends one raw request; a missing answer is a "hang" failure. */
async function exchange(head: string | Buffer, body: Buffer, where: string): Promise<RawResponse> {
  try {
    return await rawRequest(
      server.port,
      typeof head === 'string' ? Buffer.from(head, 'latin1') : head,
      body,
      REQUEST_TIMEOUT_MS,
    );
  } catch (e) {
    if (e instanceof NoAnswer) throw new Error(`${where}: ${e.message}`);
    throw e;
  }
}

function restHead(c: RestCase, bodyLength: number): { head: string; where: string } {
  const id = pathId(c.id);
  const path = c.route.path.replace('{id}', id).replace('{name}', id);
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
    'Connection: close',
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

/** The REST invariant: an answer, no 5xx, and every 4xx in Rasa's failure body. */
async function checkRest(c: RestCase): Promise<void> {
  casesRun.count++;
  const body = bodyBytes(c.body);
  const { head, where } = restHead(c, body.length);
  const res = await exchange(head, body, where);
  assertAlive();
  if (res.status >= 500) throw new Error(`${where}: ${res.status} ${preview(res.body)}`);
  if (res.status >= 400 && c.method !== 'HEAD') assertFailureBody(res, where);
}

const SIMPLE_ID = fc.stringMatching(/^[a-z0-9_-]{1,24}$/);

async function gqlRequest(c: GraphqlCase): Promise<{ status: number; text: string }> {
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
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return { status: response.status, text: await response.text() };
}

/** GraphQL invariant: no 5xx, every error carries extensions.code, never INTERNAL_SERVER_ERROR. */
async function checkGraphql(c: GraphqlCase): Promise<void> {
  casesRun.count++;
  const where = `GraphQL ${c.envelope} (${c.auth}) ${JSON.stringify(c.query.slice(0, 300))} variables ${JSON.stringify(c.variables)?.slice(0, 200)}`;
  let res: { status: number; text: string };
  try {
    res = await gqlRequest(c);
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
}

function connectSocket(): Socket {
  return io(server.base, {
    path: '/socket.io',
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
  });
}

/** Resolves with the first payload of `event`, or rejects after `ms`. */
function nextEvent(socket: Socket, event: string, ms = 15_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${event}" within ${ms} ms`)), ms);
    socket.once(event, (payload: unknown) => {
      clearTimeout(timer);
      resolve(payload);
    });
  });
}

/** A well-formed socket.io client: a session, then "hi" gets the moodbot's greeting. */
async function socketioStillServes(): Promise<void> {
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

const voiceUrl = (): string => `ws://127.0.0.1:${server.port}/webhooks/genesys/websocket`;

/** A well-formed AudioHook session: open → opened, close → closed. */
async function voiceStillServes(): Promise<void> {
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

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parley-fuzz-'));
  models = trainBot(MOODBOT, join(dir, 'models'));
  const credentials = join(dir, 'credentials.yml');
  writeFileSync(credentials, CREDENTIALS);
  idp = await startTestIdp();
  oidcToken = await fetchToken(idp);
  server = await startFuzzServer(['--enable-api'], {
    ...process.env,
    LOG_LEVEL: 'error',
    PARLEY_AUTH_TOKEN: AUTH_TOKEN,
    JWT_SECRET,
    PARLEY_MODEL: models,
    PARLEY_CREDENTIALS: credentials,
    PARLEY_SERVE_MODELS: 'true',
    PARLEY_DATA_DIR: join(dir, 'data'),
    OIDC_ISSUER_URL: idp.issuer,
    OIDC_EMBEDDED: 'false',
  });
  // Warm up every path once before the baseline, so the leak check compares like with like.
  await socketioStillServes();
  await voiceStillServes();
  await fetch(`${server.base}/model/parse?token=${AUTH_TOKEN}`, {
    method: 'POST',
    body: JSON.stringify({ text: 'hello' }),
  });
  await sleep(1000);
  rssBefore = server.rss();
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await idp?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fuzz: REST routes', () => {
  it('answer odd methods, queries, headers and bodies without 5xx, with failure bodies, never hanging', async () => {
    await holds(restCase(SIMPLE_ID), checkRest, 300);
  }, 600_000);

  it('answer odd conversation ids and model names in the path (NUL, surrogates, .., long)', async () => {
    const ids = fc.oneof(
      { weight: 4, arbitrary: oddId },
      {
        weight: 1,
        arbitrary: fc
          .record({
            n: fc.integer({ min: 256, max: 20_000 }),
            c: fc.constantFrom('a', '%C3%A9', '%00'),
          })
          .map<PathId>(({ n, c }) => ({ unit: c, times: n })),
      },
    );
    await holds(restCase(ids), checkRest, 200);
  }, 600_000);

  it('answer deeply nested JSON and YAML bodies with a 4xx, not a crash or a 5xx', async () => {
    const deep = fc.record({
      route: fc.constantFrom(
        ...([
          '/model/parse',
          '/conversations/fuzz-deep/tracker/events',
          '/webhooks/rest/webhook',
          '/model/train',
          '/model/test/intents',
          '/model/test/stories',
          '/conversations/fuzz-deep/messages',
        ] as const),
      ),
      depth: fc.integer({ min: 1_000, max: 200_000 }),
      form: fc.constantFrom('json-array', 'json-object', 'yaml-flow', 'yaml-block'),
    });
    await holds(
      deep,
      async ({ route, depth, form }) => {
        casesRun.count++;
        let text: string;
        let type = 'application/json';
        if (form === 'json-array') text = deepJson(depth, '[');
        else if (form === 'json-object') text = deepJson(depth, '{"a":');
        else {
          type = 'application/x-yaml';
          text =
            form === 'yaml-flow'
              ? `nlu: ${'['.repeat(depth)}1${']'.repeat(depth)}\n`
              : `nlu:\n${Array.from({ length: Math.min(depth, 3_000) }, (_, i) => `${' '.repeat(i)}- `).join('\n')}x\n`;
        }
        const body = Buffer.from(text);
        const where = `POST ${route} [${type}, ${form} depth ${depth}]`;
        const head = `POST ${route}?token=${AUTH_TOKEN} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`;
        const res = await exchange(head, body, where);
        assertAlive();
        if (res.status >= 500) throw new Error(`${where}: ${res.status} ${preview(res.body)}`);
        if (res.status >= 400) assertFailureBody(res, where);
      },
      30,
    );
  }, 600_000);

  it('answer oversized headers and malformed request lines with a failure body', async () => {
    const malformed = fc.oneof(
      fc
        .record({
          size: fc.integer({ min: 17_000, max: 200_000 }),
          name: fc.constantFrom('X-Big', 'Cookie', 'Authorization'),
        })
        .map(({ size, name }) => ({ header: name, size, path: '/version' })),
      fc
        .constantFrom(
          '/conversations/a\u0000b/tracker',
          '/version\u0001',
          '/ver sion',
          '/\u00ff\u00fe',
        )
        .map((path) => ({ header: null, size: 0, path })),
    );
    await holds(
      malformed,
      async ({ header, size, path }) => {
        casesRun.count++;
        const extra = header === null ? '' : `${header}: ${'a'.repeat(size)}\r\n`;
        const head = `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`;
        const what =
          header === null ? `raw path ${JSON.stringify(path)}` : `a ${size}-byte ${header} header`;
        const res = await exchange(head, Buffer.alloc(0), what);
        assertAlive();
        if (res.status >= 500) throw new Error(`${what}: ${res.status} ${preview(res.body)}`);
        if (res.status >= 400) assertFailureBody(res, what);
      },
      20,
    );
  }, 600_000);
});

describe('fuzz: GraphQL (/api/graphql)', () => {
  it('answers random documents and variables with coded errors, never INTERNAL_SERVER_ERROR', async () => {
    await holds(graphqlCase, checkGraphql, 250);
  }, 600_000);
});

describe('fuzz: socket.io channel', () => {
  beforeAll(async () => {
    // The REST fuzzing may have unloaded the model (DELETE /model): load it again.
    const res = await fetch(`${server.base}/model?token=${AUTH_TOKEN}`, {
      method: 'PUT',
      body: JSON.stringify({ model_file: models }),
    });
    expect(res.status).toBe(204);
  });

  it('survives random session_request / user_uttered payloads and keeps serving', async () => {
    const payload = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          session_id: fc.oneof(
            fc.string({ maxLength: 40 }),
            fc.jsonValue({ maxDepth: 1 }),
            fc.constant('x'.repeat(10_000)),
          ),
          message: fc.oneof(
            fc.string({ maxLength: 60 }),
            fc.jsonValue({ maxDepth: 2 }),
            fc.constant('/greet'),
          ),
          metadata: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 20 })),
          customData: fc.jsonValue({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      ),
    );
    const events = fc.array(
      fc.tuple(
        fc.constantFrom('session_request', 'user_uttered', 'user_uttered', 'other_event'),
        payload,
      ),
      { minLength: 1, maxLength: 5 },
    );
    await holds(
      events,
      async (sequence) => {
        casesRun.count++;
        const socket = connectSocket();
        try {
          await nextEvent(socket, 'connect');
          for (const [event, data] of sequence) socket.emit(event, data);
          // A round trip on the same socket after the random events: it is still served.
          const confirmed = nextEvent(socket, 'session_confirm');
          socket.emit('session_request', { session_id: 'fuzz-sio-after' });
          await confirmed.catch((e: Error) => {
            throw new Error(
              `no session_confirm after ${JSON.stringify(sequence).slice(0, 400)}: ${e.message}`,
            );
          });
        } finally {
          socket.close();
        }
        assertAlive();
      },
      40,
    );
    await socketioStillServes();
  }, 600_000);
});

describe('fuzz: voice WebSocket (AudioHook)', () => {
  const message = fc.oneof(
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    {
      weight: 4,
      arbitrary: fc
        .record(
          {
            version: fc.oneof(fc.constant('2'), fc.jsonValue({ maxDepth: 1 })),
            id: fc.oneof(fc.uuid(), fc.jsonValue({ maxDepth: 1 })),
            type: fc.oneof(
              fc.constantFrom(
                'open',
                'close',
                'ping',
                'pause',
                'resume',
                'update',
                'dtmf',
                'error',
                'playback_started',
                'playback_completed',
                'discarded',
                'paused',
                'resumed',
                'nope',
              ),
              fc.jsonValue({ maxDepth: 1 }),
            ),
            seq: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.jsonValue({ maxDepth: 1 })),
            serverseq: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.jsonValue({ maxDepth: 1 })),
            position: fc.oneof(
              fc.constantFrom('PT0S', 'PT1.5S', 'P', 'PTxS'),
              fc.jsonValue({ maxDepth: 1 }),
            ),
            parameters: fc.oneof(
              fc.jsonValue({ maxDepth: 3 }),
              fc.record(
                {
                  organizationId: fc.jsonValue({ maxDepth: 1 }),
                  conversationId: fc.oneof(fc.uuid(), fc.jsonValue({ maxDepth: 1 })),
                  participant: fc.jsonValue({ maxDepth: 2 }),
                  media: fc.oneof(
                    fc.jsonValue({ maxDepth: 3 }),
                    fc.constant([
                      { type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 },
                    ]),
                  ),
                  language: fc.jsonValue({ maxDepth: 1 }),
                  digit: fc.jsonValue({ maxDepth: 1 }),
                  reason: fc.jsonValue({ maxDepth: 1 }),
                  code: fc.jsonValue({ maxDepth: 1 }),
                  retryAfter: fc.jsonValue({ maxDepth: 1 }),
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        )
        .map((m) => JSON.stringify(m)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 100 }) },
  );
  const session = fc.record({
    openFirst: fc.boolean(),
    messages: fc.array(message, { minLength: 1, maxLength: 4 }),
    binary: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
  });

  it('answers random text messages as AudioHook does (disconnect/close, never 1011) and keeps serving', async () => {
    await holds(
      session,
      async ({ openFirst, messages, binary }) => {
        casesRun.count++;
        const where = `voice session (open first: ${openFirst}) messages ${JSON.stringify(messages).slice(0, 600)}`;
        const client = await AudioHookClient.connect({
          url: voiceUrl(),
          apiKey: API_KEY,
          clientSecret: VOICE_SECRET,
        });
        try {
          if (openFirst) {
            client.open();
            await client.waitForType('opened');
          }
          for (const m of messages) client.sendRaw(m);
          if (binary !== undefined && client.ws.readyState === WebSocket.OPEN) {
            client.sendRaw(Buffer.from(binary), true);
          }
          // A ping after the random messages: the session answers it (pong), or has ended it
          // with a `disconnect`, or closed the socket — but it never stays silent or fails.
          if (client.ws.readyState === WebSocket.OPEN) {
            client.sendRaw(
              JSON.stringify({
                version: '2',
                id: client.sessionId,
                type: 'ping',
                seq: 99,
                serverseq: 0,
                position: 'PT0S',
                parameters: {},
              }),
            );
          }
          await client
            .waitFor(
              () =>
                client.closeCode !== null ||
                client.messages.some(
                  (m) => m.type === 'pong' || m.type === 'disconnect' || m.type === 'closed',
                ),
              15_000,
              'an answer',
            )
            .catch((e: Error) => {
              throw new Error(`${where}: ${e.message}`);
            });
          if (client.closeCode === 1011) {
            throw new Error(`${where}: closed with 1011 (internal error)`);
          }
        } finally {
          client.close();
        }
        assertAlive();
      },
      40,
    );
    await voiceStillServes();
  }, 600_000);
});

describe('fuzz: the server afterwards', () => {
  it('still runs, serves every kind of client, and its memory is back near the baseline', async () => {
    assertAlive();
    expect((await fetch(`${server.base}/health/ready`)).status).toBe(200);
    await socketioStillServes();
    await voiceStillServes();
    // A leak check, not a timing check: the server gets a while to settle (V8 shrinks its heap
    // once allocation stops), then its RSS must be within a generous margin of the baseline.
    let rssAfter = server.rss();
    for (let i = 0; i < 20 && rssAfter >= rssBefore + RSS_MARGIN_BYTES; i++) {
      await sleep(1000);
      rssAfter = server.rss();
    }
    process.stderr.write(
      `fuzz: ${casesRun.count} cases (seed ${FUZZ_SEED}); server RSS before ${(rssBefore / 2 ** 20).toFixed(1)} MB, after ${(rssAfter / 2 ** 20).toFixed(1)} MB\n`,
    );
    expect(rssAfter).toBeLessThan(rssBefore + RSS_MARGIN_BYTES);
  }, 90_000);
});
