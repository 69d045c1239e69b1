import type { IncomingMessage } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { type RecognitionEvent } from 'src/core';
import { type WebSocket, WebSocketServer } from 'ws';
import { DeepgramAsr } from './deepgram-asr';

type Script = (ws: WebSocket, audioBytes: number, sent: { n: number }) => void;

function results(transcript: string, isFinal: boolean, speechFinal: boolean): string {
  return JSON.stringify({
    type: 'Results',
    channel_index: [0, 1],
    duration: 1.2,
    start: 0,
    is_final: isFinal,
    speech_final: speechFinal,
    channel: { alternatives: [{ transcript, confidence: 0.98, words: [] }] },
  });
}

/**
 * A local server speaking Deepgram's /v1/listen protocol: checks the `Token` header, counts the
 * binary audio, records text messages, answers `CloseStream` with Metadata and a normal close;
 * `script` decides what to send as audio arrives.
 */
async function fakeListen(script: Script): Promise<{
  url: string;
  requests: IncomingMessage[];
  control: unknown[];
  audioBytes: () => number;
  close: () => Promise<void>;
}> {
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: ({ req }, done) => done(req.headers.authorization === 'Token dg-key', 401),
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const requests: IncomingMessage[] = [];
  const control: unknown[] = [];
  let audio = 0;
  wss.on('connection', (ws, req) => {
    requests.push(req);
    const sent = { n: 0 };
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        audio += (data as Buffer).length;
        script(ws, audio, sent);
        return;
      }
      const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
      control.push(message);
      if (message.type === 'CloseStream') {
        ws.send(JSON.stringify({ type: 'Metadata', request_id: 'r1', duration: 1, channels: 1 }));
        ws.close(1000);
      }
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/v1/listen`,
    requests,
    control,
    audioBytes: () => audio,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

function listen(asr: DeepgramAsr): { events: RecognitionEvent[]; errors: string[] } {
  const events: RecognitionEvent[] = [];
  const errors: string[] = [];
  asr.onEvent((e) => events.push(e));
  asr.onError((e) => errors.push(e.message));
  return { events, errors };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(DeepgramAsr.name, () => {
  it('streams µ-law 8 kHz audio and turns Results into interim and final transcripts', async () => {
    const server = await fakeListen((ws, bytes, sent) => {
      if (bytes >= 1600 && sent.n === 0) {
        sent.n = 1;
        ws.send(JSON.stringify({ type: 'SpeechStarted', channel: [0], timestamp: 0.1 }));
        ws.send(results('I am', false, false));
        ws.send(results('I am sad', true, false));
        ws.send(results('today', false, false));
        ws.send(results('today', true, true));
      }
    });
    try {
      const asr = DeepgramAsr.fromOptions('dg-key', {
        endpoint: server.url,
        model: 'nova-test',
        endpointing: 300,
      });
      const { events, errors } = listen(asr);
      // Sent before the connection is open: kept and delivered once it opens.
      asr.sendAudio(new Uint8Array(800).fill(0xff));
      asr.sendAudio(new Uint8Array(800).fill(0x7f));
      await until(() => events.some((e) => e.kind === 'final'));
      expect(events).toEqual([
        { kind: 'interim', text: 'I am' },
        { kind: 'interim', text: 'I am sad' },
        { kind: 'interim', text: 'I am sad today' },
        { kind: 'final', text: 'I am sad today', confidence: 0.98 },
      ]);
      expect(server.audioBytes()).toBe(1600);
      const query = new URL(server.requests[0]!.url ?? '', 'http://x').searchParams;
      expect(Object.fromEntries(query)).toMatchObject({
        encoding: 'mulaw',
        sample_rate: '8000',
        channels: '1',
        model: 'nova-test',
        interim_results: 'true',
        endpointing: '300',
        vad_events: 'true',
        utterance_end_ms: '1000',
      });
      await asr.close();
      expect(server.control).toContainEqual({ type: 'CloseStream' });
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('flushes the accumulated finals on UtteranceEnd and sends KeepAlive', async () => {
    const server = await fakeListen((ws, bytes, sent) => {
      if (bytes >= 800 && sent.n === 0) {
        sent.n = 1;
        ws.send(results('yes please', true, false));
        ws.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 1.1 }));
      }
    });
    try {
      const asr = new DeepgramAsr({
        apiKey: 'dg-key',
        endpoint: server.url,
        model: 'nova-2-general',
        language: 'en',
        endpointingMs: 400,
        utteranceEndMs: 1000,
        smartFormat: true,
        keepAliveMs: 10,
        closeTimeoutMs: 2000,
      });
      const { events } = listen(asr);
      asr.sendAudio(new Uint8Array(800).fill(0x10));
      await until(() => events.length === 2);
      expect(events).toEqual([
        { kind: 'interim', text: 'yes please' },
        { kind: 'final', text: 'yes please', confidence: 0.98 },
      ]);
      await until(() => server.control.some((m) => (m as { type: string }).type === 'KeepAlive'));
      await asr.close();
    } finally {
      await server.close();
    }
  });

  it('reports a refused key (HTTP 401) as an engine error and closes without hanging', async () => {
    const server = await fakeListen(() => undefined);
    try {
      const asr = DeepgramAsr.fromOptions('wrong', { endpoint: server.url });
      const { errors } = listen(asr);
      asr.sendAudio(new Uint8Array(800));
      await until(() => errors.length > 0);
      expect(errors[0]).toMatch(/HTTP 401/);
      asr.sendAudio(new Uint8Array(800));
      await asr.close();
      expect(errors).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('reports a refused connection as an engine error', async () => {
    const port = await closedPort();
    const asr = DeepgramAsr.fromOptions('dg-key', { endpoint: `ws://127.0.0.1:${port}/v1/listen` });
    const { errors } = listen(asr);
    await until(() => errors.length > 0);
    expect(errors[0]).toMatch(/ECONNREFUSED/);
    await asr.close();
  });

  it('reports malformed frames and keeps recognizing; an abnormal close is an error', async () => {
    const server = await fakeListen((ws, bytes, sent) => {
      if (bytes >= 800 && sent.n === 0) {
        sent.n = 1;
        ws.send('this is not json');
        ws.send(JSON.stringify({ type: 'Results', channel: {} }));
        ws.send(Buffer.from([1, 2, 3]));
        ws.send(results('hi', true, true));
        ws.close(1011, 'NET-0001');
      }
    });
    try {
      const asr = DeepgramAsr.fromOptions('dg-key', { endpoint: server.url });
      const { events, errors } = listen(asr);
      asr.sendAudio(new Uint8Array(800).fill(0x10));
      await until(() => errors.length === 4);
      expect(errors).toEqual([
        expect.stringMatching(/unreadable message/),
        expect.stringMatching(/without a transcript/),
        expect.stringMatching(/unexpected binary/),
        expect.stringMatching(/closed the connection \(1011: NET-0001\)/),
      ]);
      expect(events).toEqual([{ kind: 'final', text: 'hi', confidence: 0.98 }]);
      await asr.close();
    } finally {
      await server.close();
    }
  });
});
