import request from 'supertest';
import { AudioHookClient } from 'test/utils/audiohook-client';
import { credentialsFile as credentials, removeTempDirs } from 'test/utils/channels';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import WebSocket, { WebSocketServer } from 'ws';

const API_KEY = 'SGVsbG8sIEkgYW0gdGhlIEFQSSBrZXkh';
const SECRET = 'TXlTdXBlclNlY3JldEtleVRlbGxOby0xITJAMyM0JDU=';

afterAll(removeTempDirs);

const GOOD = `
genesys:
  api_key: ${API_KEY}
  client_secret: ${SECRET}
  server_url: localhost:5005
  asr: { name: pocketsphinx }
  tts: { name: espeak-ng }
`;

describe('Genesys voice connector (e2e)', () => {
  let app: TestApp;
  let wsUrl: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { PARLEY_CREDENTIALS: credentials(GOOD) } });
    wsUrl = `${app.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
  });
  afterAll(() => app.close());

  const connect = (extra: Partial<Parameters<typeof AudioHookClient.connect>[0]> = {}) =>
    AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY, clientSecret: SECRET, ...extra });

  async function openedClient(): Promise<AudioHookClient> {
    const client = await connect();
    client.open();
    await client.waitForType('opened');
    return client;
  }

  it('answers GET /webhooks/genesys/ (health)', async () => {
    const res = await request(app.url).get('/webhooks/genesys/').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  describe('handshake', () => {
    it('accepts a signed request with the four headers and negotiates PCMU 8 kHz', async () => {
      const client = await connect();
      client.open();
      const opened = await client.waitForType('opened');
      expect(opened).toMatchObject({
        version: '2',
        id: client.sessionId,
        seq: 1,
        clientseq: 1,
        parameters: {
          startPaused: false,
          media: [{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 }],
        },
      });
      client.send('close', { reason: 'end' });
      expect(await client.waitForType('closed')).toMatchObject({
        seq: 2,
        clientseq: 2,
        parameters: {},
      });
      client.close();
      expect(client.violations).toEqual([]);
    });

    const refusals: Array<[string, Partial<Parameters<typeof AudioHookClient.connect>[0]>]> = [
      [
        'a missing Audiohook-Correlation-Id header',
        { headers: { 'audiohook-correlation-id': undefined } },
      ],
      ['a missing X-API-KEY header', { headers: { 'x-api-key': undefined } }],
      ['a wrong API key', { apiKey: 'not-the-key', clientSecret: undefined }],
      [
        'a bad signature',
        { clientSecret: Buffer.from('another secret of 32 bytes......').toString('base64') },
      ],
      ['an expired created time', { signature: { created: Math.floor(Date.now() / 1000) - 60 } }],
      ['an unsigned request although a client secret is configured', { clientSecret: undefined }],
    ];
    it.each(refusals)('refuses %s with HTTP 401 after a uniform delay', async (_what, extra) => {
      const started = Date.now();
      const error = await connect(extra).then(
        () => null,
        (e: { status?: number; body?: string }) => e,
      );
      expect(error?.status).toBe(401);
      expect(JSON.parse(error?.body ?? '{}')).toMatchObject({
        status: 'failure',
        reason: 'NotAuthenticated',
        code: 401,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    });

    it('refuses a replayed nonce', async () => {
      const signature = {
        nonce: 'UmVwbGF5ZWROb25jZVZhbHVlMQ==',
        created: Math.floor(Date.now() / 1000),
      };
      const sessionId = '30b0e395-84d3-4570-ac13-9a62d8f514c0';
      const organizationId = 'd7934305-0972-4844-938e-9060eef73d05';
      const correlationId = 'e160e428-53e2-487c-977d-96989bf5c99d';
      const first = await connect({ signature, sessionId, organizationId, correlationId });
      first.close();
      const replay = await connect({ signature, sessionId, organizationId, correlationId }).then(
        () => null,
        (e: { status?: number }) => e,
      );
      expect(replay?.status).toBe(401);
    });
  });

  describe('protocol', () => {
    it('answers ping with pong carrying the ping seq, update, dtmf, playback events and a pause of the client', async () => {
      const client = await openedClient();
      client.send('ping', { rtt: 'PT0.05S' });
      expect(await client.waitForType('pong')).toMatchObject({ clientseq: 2, parameters: {} });
      // the client pauses on its own (hold): no answer is due, audio while paused is dropped
      client.send('paused');
      client.sendRaw(Buffer.alloc(1600, 0xff), true);
      client.send('resumed', { start: 'PT1S', discarded: 'PT0.2S' });
      client.send('update', { language: 'en-GB' });
      expect(await client.waitForType('updated')).toMatchObject({ clientseq: 5 });
      client.send('dtmf', { digit: '5' });
      client.send('playback_started');
      client.send('playback_completed');
      client.send('paused');
      client.send('resumed', { start: 'PT1S', discarded: 'PT0S' });
      client.send('discarded', { start: 'PT1S', discarded: 'PT0.2S' });
      client.send('error', { code: 429, message: 'Too many requests', retryAfter: 'PT1.5S' });
      client.send('ping');
      expect(
        await client.waitFor(() => client.messages.filter((m) => m.type === 'pong')[1]),
      ).toMatchObject({
        clientseq: 13,
      });
      client.send('close', { reason: 'end' });
      await client.waitForType('closed');
      expect(client.messages.some((m) => m.type === 'disconnect')).toBe(false);
      expect(client.violations).toEqual([]);
      client.close();
    });

    it.each(['pause', 'resume'])(
      'ends the session when the client sends %s (a server message: the client answers paused/resumed)',
      async (type) => {
        const client = await openedClient();
        client.send(type);
        const disconnect = await client.waitForType('disconnect');
        expect(disconnect.parameters).toMatchObject({ reason: 'error' });
        expect(String(disconnect.parameters.info)).toContain(
          `'${type}' is not a supported client message`,
        );
        expect(client.messages.some((m) => m.type === 'paused' || m.type === 'resumed')).toBe(
          false,
        );
        await client.waitForType('closed'); // the client answered the disconnect with close
        client.close();
      },
    );

    it('de-interleaves a stereo offer and refuses an offer without PCMU 8 kHz', async () => {
      const stereo = await connect();
      stereo.open({
        media: [{ type: 'audio', format: 'PCMU', channels: ['external', 'internal'], rate: 8000 }],
      });
      expect((await stereo.waitForType('opened')).parameters.media[0].channels).toEqual([
        'external',
        'internal',
      ]);
      stereo.sendRaw(Buffer.alloc(3200, 0xff), true);
      stereo.sendRaw(Buffer.alloc(3, 0xff), true); // odd length for two channels
      expect((await stereo.waitForType('disconnect')).parameters).toMatchObject({
        reason: 'error',
      });
      stereo.close();

      const none = await connect();
      none.open({ media: [{ type: 'audio', format: 'L16', channels: ['external'], rate: 8000 }] });
      const disconnect = await none.waitForType('disconnect');
      expect(disconnect.parameters).toMatchObject({ reason: 'error' });
      expect(disconnect.parameters.info).toMatch(/No supported format/);
      expect(await none.waitForType('closed')).toBeDefined();
      none.close();
    });

    it('answers a connection probe with empty media and completes the close transaction', async () => {
      const client = await connect();
      client.open({
        conversationId: '00000000-0000-0000-0000-000000000000',
        participant: { id: '00000000-0000-0000-0000-000000000000', ani: '', aniName: '', dnis: '' },
      });
      expect((await client.waitForType('opened')).parameters.media).toEqual([]);
      client.send('close', { reason: 'end' });
      await client.waitForType('closed');
      client.close();
    });

    const malformed: Array<[string, (c: AudioHookClient) => void, RegExp]> = [
      ['bad JSON', (c) => c.sendRaw('{"version": "2", '), /not valid JSON/],
      [
        'a text message over 64 KiB',
        (c) => c.send('ping', { pad: 'x'.repeat(70_000) }),
        /too large/,
      ],
      ['an unknown message type', (c) => c.send('teleport'), /not a supported client message/],
      ['an out-of-order seq', (c) => c.send('ping', {}, { seq: 7 }), /Invalid seq/],
      [
        'a serverseq ahead of the server',
        (c) => c.send('ping', {}, { serverseq: 99 }),
        /Invalid serverseq/,
      ],
      [
        'another session id',
        (c) => c.send('ping', {}, { id: '30b0e395-84d3-4570-ac13-9a62d8f514c0' }),
        /session id/,
      ],
      ['a wrong version', (c) => c.send('ping', {}, { version: '1' }), /version/],
      ['a JSON array', (c) => c.sendRaw('[1,2]'), /not a JSON object/],
      ['missing parameters', (c) => c.send('ping', {}, { parameters: null }), /parameters/],
      ['a second open', (c) => c.open(), /'open' in state active/],
      ['a bad dtmf digit', (c) => c.send('dtmf', { digit: 'xyz' }), /dtmf/],
    ];
    it.each(malformed)(
      'answers %s with a disconnect error and stays responsive',
      async (_what, act, info) => {
        const client = await openedClient();
        act(client);
        const disconnect = await client.waitForType('disconnect');
        expect(disconnect.parameters.reason).toBe('error');
        expect(disconnect.parameters.info).toMatch(info);
        // the client's close (sent on disconnect) is answered, then the socket ends
        await client.waitForType('closed');
        client.close();
        await client.waitForClose();
      },
    );

    it('refuses audio before open and an open for another organization', async () => {
      const early = await connect();
      early.sendRaw(Buffer.alloc(1600, 0xff), true);
      expect((await early.waitForType('disconnect')).parameters.info).toMatch(
        /Received audio in state preparing/,
      );
      early.close();

      const other = await connect();
      other.open({ organizationId: '11111111-1111-4111-8111-111111111111' });
      expect((await other.waitForType('disconnect')).parameters).toMatchObject({
        reason: 'unauthorized',
      });
      other.close();
    });

    it('closes a socket whose client never answers the disconnect (no hung socket)', async () => {
      const client = await connect();
      // stop auto-answering: replace the handler's close by swallowing sends
      const ws = client.ws;
      const send = ws.send.bind(ws);
      ws.send = ((data: unknown, ...rest: unknown[]) => {
        if (typeof data === 'string' && data.includes('"close"')) return;
        (send as (...a: unknown[]) => void)(data, ...rest);
      }) as typeof ws.send;
      client.sendRaw('not json');
      await client.waitForType('disconnect');
      expect(await client.waitForClose(15_000)).toBe(1000);
    });
  });

  describe('same port', () => {
    it('leaves other upgrade paths to their own servers and keeps REST and GraphQL served during a call', async () => {
      const server = app.app.getHttpServer();
      const other = new WebSocketServer({ noServer: true });
      const onUpgrade = (
        req: import('node:http').IncomingMessage,
        socket: import('node:stream').Duplex,
        head: Buffer,
      ) => {
        if (req.url?.startsWith('/socket.io/')) {
          other.handleUpgrade(req, socket, head, (ws) => ws.send('hello from other'));
        }
      };
      server.on('upgrade', onUpgrade);
      try {
        const call = await openedClient();
        const peer = new WebSocket(
          `${app.url.replace('http', 'ws')}/socket.io/?EIO=4&transport=websocket`,
        );
        const greeting = await new Promise<string>((resolve, reject) => {
          peer.once('message', (d: Buffer) => resolve(d.toString()));
          peer.once('error', reject);
        });
        expect(greeting).toBe('hello from other');
        await request(app.url).get('/').expect(200);
        // GraphQL answers on the same port too (no bearer token here: its coded 401).
        const gql = await request(app.url)
          .post('/api/graphql')
          .send({ query: '{ __typename }' })
          .expect(401);
        expect(gql.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
        call.send('ping');
        await call.waitForType('pong');
        peer.close();
        call.send('close', { reason: 'end' });
        await call.waitForType('closed');
        call.close();
      } finally {
        server.off('upgrade', onUpgrade);
        other.close();
      }
    });
  });
});

describe('Genesys voice connector configuration (e2e)', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      'no api_key',
      'genesys:\n  server_url: x.example.com\n  asr: {name: pocketsphinx}\n  tts: {name: flite}\n',
      /genesys\.api_key/,
    ],
    [
      'a scheme in server_url',
      `genesys:\n  api_key: k\n  server_url: wss://x.example.com\n  asr: {name: pocketsphinx}\n  tts: {name: flite}\n`,
      /genesys\.server_url/,
    ],
    [
      'an unknown tts engine',
      `genesys:\n  api_key: k\n  server_url: x.example.com\n  asr: {name: pocketsphinx}\n  tts: {name: nope}\n`,
      /genesys\.tts\.name/,
    ],
    [
      'no asr',
      `genesys:\n  api_key: k\n  server_url: x.example.com\n  tts: {name: flite}\n`,
      /genesys\.asr/,
    ],
    [
      'a secret that is not base-64',
      `genesys:\n  api_key: k\n  client_secret: "not base64!"\n  server_url: x\n  asr: {name: pocketsphinx}\n  tts: {name: flite}\n`,
      /genesys\.client_secret/,
    ],
    [
      'a bad min_words',
      `genesys:\n  api_key: k\n  server_url: x\n  asr: {name: pocketsphinx}\n  tts: {name: flite}\n  interruptions: {enabled: true, min_words: 0}\n`,
      /genesys\.interruptions\.min_words/,
    ],
  ];
  cases.push([
    'deepgram TTS without DEEPGRAM_API_KEY',
    'genesys:\n  api_key: k\n  server_url: x\n  asr: {name: pocketsphinx}\n  tts: {name: deepgram}\n',
    /genesys\.tts\.name: deepgram needs DEEPGRAM_API_KEY/,
  ]);
  it.each(cases)('stops start-up on %s, naming the key', async (_what, yaml, key) => {
    await expect(startTestApp({ env: { PARLEY_CREDENTIALS: credentials(yaml) } })).rejects.toThrow(
      key,
    );
  });

  it('serves no voice route without a genesys entry', async () => {
    const app = await startTestApp({ env: { PARLEY_CREDENTIALS: credentials('rest:\n') } });
    try {
      await request(app.url).get('/webhooks/genesys/').expect(404);
    } finally {
      await app.close();
    }
  });
});
