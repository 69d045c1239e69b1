import fc from 'fast-check';
import { AudioHookClient } from 'test/utils/audiohook-client';
import WebSocket from 'ws';
import {
  API_KEY,
  assertAlive,
  assertFailureBody,
  AUTH_TOKEN,
  checkGraphql,
  checkRest,
  connectSocket,
  exchange,
  holds,
  modelFile,
  nextEvent,
  preview,
  server,
  SIMPLE_ID,
  socketioStillServes,
  startFuzzTarget,
  stopFuzzTarget,
  VOICE_SECRET,
  voiceStillServes,
  voiceUrl,
} from './fuzz-target';
import { graphqlCase } from './graphql-arbitraries';
import { casesRun, FUZZ_SEED, sleep } from './harness';
import { deepJson, oddId, type PathId, restCase } from './rest-arbitraries';

/**
 * Robustness guarantees of the whole server, held by property-based fuzzing against a real
 * `parley run` process (a crash is an exit we can see): hostile input gets a clear 4xx failure
 * body or a GraphQL error with a code, never a 5xx, a hang or a process exit, and the server
 * keeps serving well-formed clients afterwards. See test/fuzz/README.md.
 */

/**
 * Leak check: RSS after the run against the baseline before it, each read right after a full
 * garbage collection in the server (through its inspector), so uncollected garbage counts in
 * neither.
 */
const RSS_MARGIN_BYTES = 50 * 1024 * 1024;

let rssBefore = 0;

beforeAll(async () => {
  await startFuzzTarget('error', { inspect: true });
  // Warm up every path once before the baseline, so the leak check compares like with like.
  await socketioStillServes();
  await voiceStillServes();
  await fetch(`${server.base}/model/parse?token=${AUTH_TOKEN}`, {
    method: 'POST',
    body: JSON.stringify({ text: 'hello' }),
  });
  await server.collectGarbage();
  await sleep(1000);
  rssBefore = server.rss();
}, 180_000);

afterAll(stopFuzzTarget);

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
      body: JSON.stringify({ model_file: modelFile }),
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
    // A leak check, not a timing check: RSS after a full collection, as the baseline was.
    await server.collectGarbage();
    await sleep(1000);
    const rssAfter = server.rss();
    process.stderr.write(
      `fuzz: ${casesRun.count} cases (seed ${FUZZ_SEED}); server RSS before ${(rssBefore / 2 ** 20).toFixed(1)} MB, after ${(rssAfter / 2 ** 20).toFixed(1)} MB\n`,
    );
    expect(rssAfter).toBeLessThan(rssBefore + RSS_MARGIN_BYTES);
  }, 90_000);
});
