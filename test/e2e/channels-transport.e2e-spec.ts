import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { io, type Socket } from 'socket.io-client';
import request from 'supertest';
import { credentialsFile, removeTempDirs } from 'test/utils/channels';
import { cli } from 'test/utils/cli';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import { WebSocket, WebSocketServer } from 'ws';

afterAll(removeTempDirs);

const CREDENTIALS = `
rest:
callback:
  url: http://127.0.0.1:9/unused
socketio:
  user_message_evt: user_uttered
  bot_message_evt: bot_uttered
  session_persistence: true
test.fixtures.channels.my_channels.MyChannel:
./test/fixtures/channels/my_channels.ShoutChannel:
  greeting: hello
`;

describe('channels from credentials.yml: routes, validation, socket.io transport', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PARLEY_CREDENTIALS: credentialsFile(CREDENTIALS) } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves a health route per configured channel, without a token', async () => {
    for (const name of ['callback', 'socketio', 'myio']) {
      const res = await request(t.url).get(`/webhooks/${name}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
    expect((await request(t.url).get('/webhooks/shout/')).body).toEqual({ status: 'hello' });
  });

  it('has no routes for channels that are not configured', async () => {
    const res = await request(t.url)
      .post('/webhooks/telegram/webhook')
      .send({ sender: 'a', message: 'b' });
    expect(res.status).toBe(404);
    expect(res.body.status).toBe('failure');
    expect((await request(t.url).post('/webhooks/socketio/webhook').send({})).status).toBe(404);
  });

  it.each([
    ['callback', undefined, 'BadRequest', /needs a JSON body/],
    ['callback', { message: 'hi' }, 'BadRequest', /"sender" is missing/],
    ['callback', { sender: 'u', message: ['hi'] }, 'BadRequest', /"message" must be a string/],
    ['myio', { sender: 'u' }, 'BadRequest', /"message" is missing/],
    [
      'myio',
      { sender: true, message: 'hi' },
      'BadRequest',
      /"sender" must be a string, got a boolean/,
    ],
    [
      'myio',
      { sender: 'u', message: 'hi', metadata: 'x' },
      'BadRequest',
      /"metadata" must be an object/,
    ],
    ['myio', [{ sender: 'u', message: 'hi' }], 'BadRequest', /must be a JSON object/],
  ])(
    'answers a bad %s webhook body %j with a 400 failure body',
    async (name, body, reason, message) => {
      const req = request(t.url)
        .post(`/webhooks/${name}/webhook`)
        .set('content-type', 'application/json');
      const res = await (body === undefined ? req : req.send(JSON.stringify(body)));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        version: expect.any(String),
        status: 'failure',
        reason,
        code: 400,
      });
      expect(res.body.message).toMatch(message);
    },
  );

  it('answers a malformed JSON body with a 400 failure body', async () => {
    const res = await request(t.url)
      .post('/webhooks/callback/webhook')
      .set('content-type', 'application/json')
      .send('{"sender": ');
    expect(res.status).toBe(400);
    expect(res.body.status).toBe('failure');
  });

  it('lets a custom channel reject what its own extractor cannot read', async () => {
    const res = await request(t.url).post('/webhooks/shout/webhook').send({ text: 'hi' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'failure', reason: 'BadRequest' });
    expect(res.body.message).toBe(
      'Channel "shout" could not read the sender of the request: body.user.id is required',
    );
  });

  it('confirms socket.io sessions, keeping the id the widget sends', async () => {
    const socket = io(t.url, { path: '/socket.io', transports: ['websocket'], forceNew: true });
    try {
      const first = new Promise((resolve) => socket.once('session_confirm', resolve));
      socket.emit('session_request', { session_id: 'webchat-session-1' });
      expect(await first).toBe('webchat-session-1');
      const fresh = new Promise((resolve) => socket.once('session_confirm', resolve));
      socket.emit('session_request', {});
      expect(await fresh).toMatch(/^[0-9a-f]{32}$/);
    } finally {
      socket.close();
    }
  });

  it('leaves WebSocket upgrades on other paths to their owner', async () => {
    const other = new WebSocketServer({ noServer: true });
    const server = t.app.getHttpServer();
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (req.url === '/other/websocket') {
        other.handleUpgrade(req, socket, head, (ws) => ws.send('owned by another route'));
      }
    };
    server.on('upgrade', onUpgrade);
    const socket: Socket = io(t.url, {
      path: '/socket.io',
      transports: ['websocket'],
      forceNew: true,
    });
    try {
      const ws = new WebSocket(`${t.url.replace('http', 'ws')}/other/websocket`);
      const first = await new Promise<string>((resolve, reject) => {
        ws.once('message', (data: Buffer) => resolve(data.toString()));
        ws.once('error', reject);
      });
      expect(first).toBe('owned by another route');
      // Both sockets are open at once.
      const confirmed = new Promise((resolve) => socket.once('session_confirm', resolve));
      socket.emit('session_request', { session_id: 'both-open' });
      expect(await confirmed).toBe('both-open');
      expect(ws.readyState).toBe(WebSocket.OPEN);
      ws.close();
    } finally {
      socket.close();
      server.off('upgrade', onUpgrade);
      other.close();
    }
  });
});

describe('a custom channel while no model is loaded', () => {
  it('ignores the message as Rasa does: no messages, no tracker', async () => {
    const app = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_MODEL: join(tmpdir(), 'parley-no-models-here'),
        PARLEY_CREDENTIALS: credentialsFile('test.fixtures.channels.my_channels.MyChannel:\n'),
      },
    });
    try {
      const res = await request(app.url)
        .post('/webhooks/myio/webhook')
        .send({ sender: 'nobody', message: 'hi' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        messages: [],
        metadata: {},
        conversation_id: 'nobody',
        tracker_state: null,
      });
    } finally {
      await app.close();
    }
  });
});

describe('credentials.yml errors stop the start, naming the key', () => {
  it.each([
    ['an unknown channel', 'facebok:\n  verify: x\n', /"facebok" is not a known channel/],
    ['a callback without url', 'callback:\n  headers: {}\n', /"callback.url" is missing/],
    [
      'a missing custom module',
      'addons.nowhere.MyInput:\n',
      /"addons.nowhere.MyInput" names a custom channel module that was not found/,
    ],
  ])('in-process: %s', async (_what, yaml, message) => {
    await expect(
      startTestApp({ env: { PARLEY_CREDENTIALS: credentialsFile(yaml) } }),
    ).rejects.toThrow(message);
  });

  it('parley run --credentials exits with 1 and the message', () => {
    const r = cli([
      'run',
      '--credentials',
      credentialsFile('socketio:\n  session_persistence: maybe\n'),
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"socketio.session_persistence" must be true or false');
  });
});
