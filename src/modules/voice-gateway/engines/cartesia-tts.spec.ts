import type { IncomingMessage } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { type SpeechSynthesizer } from 'src/core';
import { type WebSocket, WebSocketServer } from 'ws';
import { CartesiaTts } from './cartesia-tts';

interface GenerationRequest {
  model_id: string;
  transcript: string;
  voice: { mode: string; id: string };
  language: string;
  output_format: { container: string; encoding: string; sample_rate: number };
  context_id: string;
  continue: boolean;
}

type Behaviour = (ws: WebSocket, request: GenerationRequest) => void;

/**
 * A local server speaking Cartesia's /tts/websocket protocol: checks `X-API-Key` and
 * `Cartesia-Version`, records generation requests, and answers as `behaviour` says.
 */
async function fakeCartesia(behaviour: Behaviour): Promise<{
  url: string;
  requests: IncomingMessage[];
  received: GenerationRequest[];
  close: () => Promise<void>;
}> {
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: ({ req }, done) =>
      done(
        req.headers['x-api-key'] === 'ca-key' && req.headers['cartesia-version'] !== undefined,
        401,
      ),
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const requests: IncomingMessage[] = [];
  const received: GenerationRequest[] = [];
  wss.on('connection', (ws, req) => {
    requests.push(req);
    ws.on('message', (data) => {
      const request = JSON.parse((data as Buffer).toString('utf8')) as GenerationRequest;
      received.push(request);
      behaviour(ws, request);
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/tts/websocket`,
    requests,
    received,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

function chunk(contextId: string, bytes: Buffer): string {
  return JSON.stringify({
    type: 'chunk',
    context_id: contextId,
    status_code: 206,
    done: false,
    data: bytes.toString('base64'),
    step_time: 12.5,
  });
}

async function collect(tts: SpeechSynthesizer, text: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of tts.synthesize(text)) chunks.push(c);
  return Buffer.concat(chunks);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(CartesiaTts.name, () => {
  it('asks for raw pcm_mulaw 8 kHz with the model and voice and yields the chunks until done', async () => {
    const server = await fakeCartesia((ws, request) => {
      ws.send(chunk(request.context_id, Buffer.alloc(1200, 0xfe)));
      ws.send(chunk('someone-else', Buffer.alloc(999, 0x00)));
      ws.send(chunk(request.context_id, Buffer.alloc(800, 0xfd)));
      ws.send(JSON.stringify({ type: 'done', context_id: request.context_id, done: true }));
    });
    try {
      const tts = CartesiaTts.fromOptions('ca-key', {
        endpoint: server.url,
        model: 'sonic-test',
        voice: 'voice-123',
        language: 'de',
      });
      const audio = await collect(tts, '  Hello   caller ');
      expect(audio.length).toBe(2000);
      expect(audio[0]).toBe(0xfe);
      expect(audio[1999]).toBe(0xfd);
      expect(server.received).toEqual([
        {
          model_id: 'sonic-test',
          transcript: 'Hello caller',
          voice: { mode: 'id', id: 'voice-123' },
          language: 'de',
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          context_id: expect.any(String) as string,
          continue: false,
        },
      ]);
      expect(server.requests[0]!.headers['cartesia-version']).toBe('2024-06-10');
    } finally {
      await server.close();
    }
  });

  it('fails clearly on HTTP 401, an error message, malformed frames and an early close', async () => {
    let mode: 'error' | 'garbage' | 'binary' | 'no-data' | 'hangup' = 'error';
    const server = await fakeCartesia((ws, request) => {
      if (mode === 'error') {
        ws.send(
          JSON.stringify({
            type: 'error',
            context_id: request.context_id,
            status_code: 400,
            done: true,
            error: 'invalid voice id',
          }),
        );
      } else if (mode === 'garbage') ws.send('{{not json');
      else if (mode === 'binary') ws.send(Buffer.from([1, 2, 3]));
      else if (mode === 'no-data') ws.send(JSON.stringify({ type: 'chunk', done: false }));
      else {
        ws.send(chunk(request.context_id, Buffer.alloc(100, 0xfe)));
        ws.close(1011);
      }
    });
    const tts = CartesiaTts.fromOptions('ca-key', { endpoint: server.url });
    try {
      await expect(
        collect(CartesiaTts.fromOptions('wrong', { endpoint: server.url }), 'x'),
      ).rejects.toThrow(/cartesia TTS: refused the connection \(HTTP 401\)/);
      await expect(collect(tts, 'x')).rejects.toThrow(/cartesia TTS: invalid voice id/);
      mode = 'garbage';
      await expect(collect(tts, 'x')).rejects.toThrow(/unreadable message/);
      mode = 'binary';
      await expect(collect(tts, 'x')).rejects.toThrow(/unexpected binary message/);
      mode = 'no-data';
      await expect(collect(tts, 'x')).rejects.toThrow(/chunk without base-64 data/);
      mode = 'hangup';
      await expect(collect(tts, 'x')).rejects.toThrow(/closed before the audio was complete/);
    } finally {
      await server.close();
    }
    const port = await closedPort();
    await expect(
      collect(CartesiaTts.fromOptions('ca-key', { endpoint: `ws://127.0.0.1:${port}/` }), 'x'),
    ).rejects.toThrow(/cartesia TTS: .*ECONNREFUSED/);
  });

  it('gives up after the timeout when the server never finishes', async () => {
    const server = await fakeCartesia(() => undefined);
    try {
      const tts = CartesiaTts.fromOptions('ca-key', { endpoint: server.url, timeout: 0.2 });
      await expect(collect(tts, 'x')).rejects.toThrow(/cartesia TTS: timed out after 200 ms/);
    } finally {
      await server.close();
    }
  });
});
