import type { IncomingMessage } from 'node:http';
import { type AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { DeepgramTts } from './deepgram-tts';

/** A local server speaking Deepgram's /v1/speak protocol. */
async function fakeDeepgram(behaviour: 'ok' | 'error'): Promise<{
  url: string;
  requests: IncomingMessage[];
  received: unknown[];
  close: () => Promise<void>;
}> {
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: ({ req }, done) => done(req.headers.authorization === 'Token dg-key', 401),
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const requests: IncomingMessage[] = [];
  const received: unknown[] = [];
  wss.on('connection', (ws, req) => {
    requests.push(req);
    ws.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
      received.push(message);
      if (message.type !== 'Flush') return;
      if (behaviour === 'error') {
        ws.send(JSON.stringify({ type: 'Error', description: 'bad model' }));
        return;
      }
      ws.send(Buffer.alloc(3000, 0xfe));
      ws.send(Buffer.alloc(2000, 0xfd));
      ws.send(JSON.stringify({ type: 'Flushed', sequence_id: 0 }));
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/v1/speak`,
    requests,
    received,
    close: () => new Promise((resolve) => wss.close(() => resolve())),
  };
}

async function collect(tts: DeepgramTts, text: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of tts.synthesize(text)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe(DeepgramTts.name, () => {
  it('asks for µ-law 8 kHz, sends Speak then Flush and yields the binary audio until Flushed', async () => {
    const server = await fakeDeepgram('ok');
    try {
      const tts = DeepgramTts.fromOptions('dg-key', { endpoint: server.url, model: 'aura-test' });
      const audio = await collect(tts, 'Hello caller');
      expect(audio.length).toBe(5000);
      expect(audio[0]).toBe(0xfe);
      expect(audio[4999]).toBe(0xfd);
      const query = new URL(server.requests[0]!.url ?? '', 'http://x').searchParams;
      expect(Object.fromEntries(query)).toMatchObject({
        model: 'aura-test',
        encoding: 'mulaw',
        sample_rate: '8000',
      });
      expect(server.received.slice(0, 2)).toEqual([
        { type: 'Speak', text: 'Hello caller' },
        { type: 'Flush' },
      ]);
    } finally {
      await server.close();
    }
  });

  it('fails clearly on a wrong key and on an error message', async () => {
    const server = await fakeDeepgram('error');
    try {
      await expect(
        collect(DeepgramTts.fromOptions('wrong', { endpoint: server.url }), 'x'),
      ).rejects.toThrow(/HTTP 401/);
      await expect(
        collect(DeepgramTts.fromOptions('dg-key', { endpoint: server.url }), 'x'),
      ).rejects.toThrow(/bad model/);
    } finally {
      await server.close();
    }
  });
});
