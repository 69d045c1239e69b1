import { execFile } from 'node:child_process';
import { connect as netConnect } from 'node:net';
import { io, type Socket } from 'socket.io-client';
import { readStoryFiles, trainDialogue } from 'src/core';
import request from 'supertest';
import {
  credentialsFile,
  removeTempDirs,
  startReceivingServer,
  type ReceivingServer,
} from 'test/utils/channels';
import { startTestApp, testDomain, uniqueId, type TestApp } from 'test/utils/create-test-app';

afterAll(removeTempDirs);

/** PARLEY_MAX_TEXT_LENGTH's default. */
const MAX_TEXT = 10_000;
const TOO_LONG = 'a'.repeat(MAX_TEXT + 1);

function expectFailure(res: request.Response, code = 400): Record<string, unknown> {
  expect(res.status).toBe(code);
  expect(res.body).toMatchObject({ version: '1.0.0', status: 'failure', code });
  expect(typeof res.body.message).toBe('string');
  expect(typeof res.body.reason).toBe('string');
  return res.body as Record<string, unknown>;
}

function expectTextLimit(res: request.Response): void {
  const body = expectFailure(res);
  expect(body.message).toContain(String(MAX_TEXT));
  expect(body.details).toMatchObject({ rule: 'max_text_length', max_length: MAX_TEXT });
}

/** `[[[…]]]` nested `depth` levels around `inner`. */
function nested(depth: number, inner = '1'): string {
  return `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
}

function connect(url: string): Socket {
  return io(url, { path: '/socket.io', transports: ['websocket'], forceNew: true });
}

function nextEvent(socket: Socket, event: string): Promise<unknown> {
  return new Promise((resolve) => socket.once(event, resolve));
}

const STORIES = [
  'stories:',
  '- story: greet',
  '  steps:',
  '  - intent: greet',
  '  - action: utter_greet',
  '',
].join('\n');

describe('hostile input on the REST routes and channels', () => {
  let t: TestApp;
  let callback: ReceivingServer;

  beforeAll(async () => {
    callback = await startReceivingServer();
    t = await startTestApp({
      env: {
        PARLEY_CREDENTIALS: credentialsFile(
          [
            'rest:',
            'callback:',
            `  url: ${callback.url}/bot`,
            'socketio:',
            '  session_persistence: true',
            'test.fixtures.channels.my_channels.MyChannel:',
            'test.fixtures.channels.my_channels.EchoChannel:',
          ].join('\n'),
        ),
      },
    });
    // The test domain with dialogue policies, so /model/test/stories reads its body.
    const domain = testDomain();
    const { ensemble } = trainDialogue(
      readStoryFiles([{ text: STORIES, file: 'stories.yml' }]).blocks,
      domain,
      [{ name: 'MemoizationPolicy' }, { name: 'RulePolicy' }],
    );
    t.registry.load({
      domain,
      policies: ensemble,
      modelId: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      modelFile: '20261121-101500-brisk-crab.tar.gz',
      assistantId: 'test_assistant',
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await callback?.close();
  });

  async function userTexts(id: string): Promise<string[]> {
    const res = await request(t.url)
      .get(`/conversations/${encodeURIComponent(id)}/tracker?include_events=ALL`)
      .expect(200);
    return (res.body.events as Array<{ event: string; text?: string }>)
      .filter((e) => e.event === 'user')
      .map((e) => e.text ?? '');
  }

  describe('user text over PARLEY_MAX_TEXT_LENGTH is a 400 naming the limit, and nothing is stored', () => {
    it('REST webhook: the limit itself passes and is stored, one more character is refused', async () => {
      const id = uniqueId('text-rest');
      const atLimit = 'b'.repeat(MAX_TEXT);
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .send({ sender: id, message: atLimit })
        .expect(200);
      expectTextLimit(
        await request(t.url).post('/webhooks/rest/webhook').send({ sender: id, message: TOO_LONG }),
      );
      expect(await userTexts(id)).toEqual([atLimit]);
    });

    it.each<[string, (id: string) => [string, object]]>([
      [
        'callback',
        (id: string) => ['/webhooks/callback/webhook', { sender: id, message: TOO_LONG }],
      ],
      [
        'custom (REST body)',
        (id: string) => ['/webhooks/myio/webhook', { sender: id, message: TOO_LONG }],
      ],
      [
        'custom (own body)',
        (id: string) => ['/webhooks/echo/webhook', { from: id, says: TOO_LONG }],
      ],
      [
        'messages',
        (id: string) => [`/conversations/${id}/messages`, { sender: 'user', text: TOO_LONG }],
      ],
      [
        'trigger_intent (entities)',
        (id: string) => [
          `/conversations/${id}/trigger_intent`,
          { name: 'greet', entities: { name: TOO_LONG } },
        ],
      ],
      [
        'tracker events',
        (id: string) => [`/conversations/${id}/tracker/events`, { event: 'user', text: TOO_LONG }],
      ],
    ])('%s', async (_, route) => {
      const id = uniqueId('text');
      const [path, body] = route(id);
      expectTextLimit(await request(t.url).post(path).send(body));
      expect(await userTexts(id)).toEqual([]);
    });

    it('/model/parse', async () => {
      expectTextLimit(await request(t.url).post('/model/parse').send({ text: TOO_LONG }));
      expect((await request(t.url).post('/model/parse').send({ text: 'hi' })).status).toBe(200);
    });

    it('a message body over PARLEY_MESSAGE_BODY_LIMIT is a 413 naming the limit', async () => {
      const res = await request(t.url)
        .post('/webhooks/rest/webhook')
        .send({ sender: uniqueId('big'), message: 'x'.repeat(2 * 1024 * 1024) });
      const body = expectFailure(res, 413);
      expect(body.details).toEqual({ max_bytes: 64 * 1024 });
    });

    it('socket.io user_uttered: message_error with the failure body, no turn', async () => {
      const socket = connect(t.url);
      try {
        const id = uniqueId('text-sio');
        const confirmed = nextEvent(socket, 'session_confirm');
        socket.emit('session_request', { session_id: id });
        expect(await confirmed).toBe(id);
        const refused = nextEvent(socket, 'message_error');
        socket.emit('user_uttered', { session_id: id, message: TOO_LONG });
        expect(await refused).toMatchObject({
          status: 'failure',
          code: 400,
          details: { rule: 'max_text_length', max_length: MAX_TEXT },
        });
        // A valid message afterwards is handled, and is the only one stored.
        const answered = nextEvent(socket, 'bot_uttered');
        socket.emit('user_uttered', { session_id: id, message: '/greet' });
        expect(await answered).toMatchObject({ text: expect.any(String) as string });
        expect(await userTexts(id)).toEqual(['/greet']);
      } finally {
        socket.disconnect();
      }
    });
  });

  describe('conversation and sender ids follow one set of rules (400 naming the rule)', () => {
    const LONG_ID = 'c'.repeat(256);

    it.each([
      ['NUL', 'a\u0000b', 'control'],
      ['a control character', 'a\u0007b', 'control'],
      ['a lone surrogate', 'a\ud800b', 'unicode'],
      ['256 characters', LONG_ID, 'length'],
      ['3,000 characters', 'd'.repeat(3000), 'length'],
    ])('REST webhook sender with %s', async (_, sender, rule) => {
      const res = await request(t.url)
        .post('/webhooks/rest/webhook')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ sender, message: 'hi' }));
      const body = expectFailure(res);
      expect(body.details).toMatchObject({ parameter: 'sender', rule });
    });

    it.each(['callback', 'myio'])('%s webhook sender', async (channel) => {
      const res = await request(t.url)
        .post(`/webhooks/${channel}/webhook`)
        .send({ sender: LONG_ID, message: 'hi' });
      expect(expectFailure(res).details).toMatchObject({ parameter: 'sender', rule: 'length' });
    });

    it('a custom channel that reads the sender itself', async () => {
      const res = await request(t.url)
        .post('/webhooks/echo/webhook')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ from: 'x\u0000y', says: 'hi' }));
      expect(expectFailure(res).details).toMatchObject({ parameter: 'sender', rule: 'control' });
    });

    it('a 255-character sender is the longest accepted, and it is stored', async () => {
      const id = `${uniqueId('max')}-`.padEnd(255, 'e');
      await request(t.url)
        .post('/webhooks/rest/webhook')
        .send({ sender: id, message: '/greet' })
        .expect(200);
      expect(await userTexts(id)).toEqual(['/greet']);
    });

    it.each([
      ['get', '/tracker'],
      ['delete', '/tracker'],
      ['post', '/tracker/events'],
      ['put', '/tracker/events'],
      ['get', '/story'],
      ['post', '/messages'],
      ['post', '/trigger_intent'],
      ['post', '/execute'],
      ['post', '/predict'],
    ] as const)('%s /conversations/{id}%s with %%00 or an over-long id', async (method, suffix) => {
      for (const [id, rule] of [
        ['a%00b', 'control'],
        [LONG_ID, 'length'],
      ]) {
        const res = await request(t.url)[method](`/conversations/${id}${suffix}`).send({
          event: 'action',
          name: 'action_listen',
        });
        expect(expectFailure(res).details).toMatchObject({
          parameter: 'conversation_id',
          in: 'path',
          rule,
        });
      }
    });
  });

  describe('deeply nested bodies are a 400 naming the bound, never a 500 or a crash', () => {
    it.each([
      ['tracker events', (id: string) => `/conversations/${id}/tracker/events`],
      ['messages', (id: string) => `/conversations/${id}/messages`],
      ['predict', () => '/model/predict'],
      ['conversation predict', (id: string) => `/conversations/${id}/predict`],
      ['REST webhook', () => '/webhooks/rest/webhook'],
    ])('JSON nested 5,000 deep: %s', async (_, path) => {
      const id = uniqueId('deep');
      const body = `[{"event": "user", "text": "hi", "metadata": {"x": ${nested(5000)}}}]`;
      const res = await request(t.url)
        .post(path(id))
        .set('Content-Type', 'application/json')
        .send(body);
      expect(expectFailure(res).details).toMatchObject({ rule: 'max_json_depth', max_depth: 64 });
    });

    it('/model/train with 100,000 nested brackets, twice: 400 both times, the server lives on', async () => {
      const body = nested(100_000, '');
      for (const type of ['application/x-yaml', 'application/json']) {
        for (let i = 0; i < 2; i++) {
          const res = await request(t.url)
            .post('/model/train')
            .set('Content-Type', type)
            .send(body);
          expect(expectFailure(res).message).toMatch(/limit of 64 levels/);
        }
      }
      await request(t.url).get('/version').expect(200);
    });

    it.each(['/model/test/intents', '/model/test/stories'])(
      '%s with 60,000 nested brackets',
      async (path) => {
        const res = await request(t.url)
          .post(path)
          .set('Content-Type', 'application/x-yaml')
          .send(nested(60_000, ''));
        expect(expectFailure(res).message).toMatch(/limit of 64 levels/);
        await request(t.url).get('/version').expect(200);
      },
    );

    it('socket.io metadata nested 1,000 deep: message_error', async () => {
      const socket = connect(t.url);
      try {
        const id = uniqueId('deep-sio');
        const confirmed = nextEvent(socket, 'session_confirm');
        socket.emit('session_request', { session_id: id });
        await confirmed;
        const refused = nextEvent(socket, 'message_error');
        socket.emit('user_uttered', {
          session_id: id,
          message: 'hi',
          metadata: JSON.parse(nested(1000)) as unknown,
        });
        expect(await refused).toMatchObject({ code: 400, details: { rule: 'max_json_depth' } });
        expect(await userTexts(id)).toEqual([]);
      } finally {
        socket.disconnect();
      }
    });
  });

  it('a 20 KB URL is a 431 with the failure body and Connection: close', async () => {
    const port = new URL(t.url).port;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = netConnect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
      socket.write(`GET /conversations/${'x'.repeat(20_000)}/tracker HTTP/1.1\r\nHost: x\r\n\r\n`);
    });
    const [head, json] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head?.toLowerCase()).toContain('connection: close');
    expect(head?.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(json ?? '')).toMatchObject({
      status: 'failure',
      code: 431,
      reason: 'RequestHeaderFieldsTooLarge',
      details: { rule: 'max_header_size' },
    });
  });

  it('a 120 KB URL followed by a 1.4 MB body still gets its 431, not a reset connection', async () => {
    // The client runs in its own process (in this one, the server and client would take turns
    // on one event loop and hide the race): it writes everything at once, reads while it
    // writes, and prints the status line of each of 10 answers to 10 such requests at once.
    const client = `
      const net = require('node:net');
      const head = 'POST /conversations/' + '%C3%A9'.repeat(20000) + '/predict HTTP/1.1\\r\\n' +
        'Host: x\\r\\nContent-Type: application/json\\r\\nContent-Length: 1400000\\r\\n\\r\\n';
      const bytes = Buffer.concat([Buffer.from(head), Buffer.alloc(1400000, 0x61)]);
      const one = () => new Promise((resolve) => {
        const socket = net.connect(Number(process.argv[1]), '127.0.0.1');
        let data = '';
        let error = null;
        socket.on('data', (chunk) => (data += chunk));
        socket.on('error', (e) => (error = e.code));
        socket.on('end', () => { socket.destroy(); resolve({ data, error }); });
        socket.on('close', () => resolve({ data, error }));
        socket.write(bytes);
      });
      (async () => {
        const raws = await Promise.all(Array.from({ length: 10 }, one));
        for (const { data, error } of raws) {
          const [head, body] = data.split('\\r\\n\\r\\n');
          console.log(JSON.stringify({ status: head.slice(0, 12), body, error }));
        }
      })();`;
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['-e', client, new URL(t.url).port], (error, stdout) => {
        if (error) reject(new Error(error.message));
        else resolve(stdout);
      });
    });
    const answers = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { status: string; body?: string; error: string | null });
    expect(answers).toHaveLength(10);
    for (const answer of answers) {
      // A reset (instead of a half-close) may throw the answer away before the client reads it.
      expect(answer.error).toBeNull();
      expect(answer.status).toBe('HTTP/1.1 431');
      expect(JSON.parse(answer.body ?? '')).toMatchObject({ status: 'failure', code: 431 });
    }
    await request(t.url).get('/version').expect(200);
  });

  describe('socket.io session_request with a session_id that breaks the id rules', () => {
    it.each([
      ['NUL', 'a\u0000b', 'control'],
      ['5,000 characters', 'r'.repeat(5000), 'length'],
    ])(
      '%s: session_error naming the rule, then a new id is confirmed and works',
      async (_, bad, rule) => {
        const socket = connect(t.url);
        try {
          const error = nextEvent(socket, 'session_error');
          const confirmed = nextEvent(socket, 'session_confirm');
          socket.emit('session_request', { session_id: bad });
          expect(await error).toMatchObject({
            status: 'failure',
            code: 400,
            details: { parameter: 'session_id', rule },
          });
          const fresh = (await confirmed) as string;
          expect(fresh).not.toBe(bad);
          expect(fresh).toMatch(/^[0-9a-f]{32}$/);
          // Messages under the bad id are refused; under the confirmed one they are stored.
          const refused = nextEvent(socket, 'message_error');
          socket.emit('user_uttered', { session_id: bad, message: 'hi' });
          expect(await refused).toMatchObject({
            code: 400,
            details: { parameter: 'session_id', rule },
          });
          const answered = nextEvent(socket, 'bot_uttered');
          socket.emit('user_uttered', { session_id: fresh, message: '/greet' });
          await answered;
          expect(await userTexts(fresh)).toEqual(['/greet']);
        } finally {
          socket.disconnect();
        }
      },
    );
  });
});
