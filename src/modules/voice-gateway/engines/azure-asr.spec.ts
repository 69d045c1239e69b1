import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { mulawEncode, parseWav, type RecognitionEvent } from 'src/core';
import { AzureAsr } from './azure-asr';

interface Received {
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A local server speaking Azure's speech-to-text REST API for short audio
 * (`POST /speech/recognition/conversation/cognitiveservices/v1`): 401 without the right key,
 * otherwise `respond` answers with the request's WAV in hand.
 */
async function fakeAzureStt(
  respond: (res: ServerResponse, request: Received) => void,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = {
        url: new URL(req.url ?? '', 'http://x'),
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      received.push(request);
      if (req.headers['ocp-apim-subscription-key'] !== 'az-key') {
        res.writeHead(401, 'Unauthorized').end();
        return;
      }
      respond(res, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/speech/recognition/conversation/cognitiveservices/v1`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** µ-law: `silenceMs` of silence, `toneMs` of a loud 440 Hz tone, `silenceMs` of silence. */
function utterance(toneMs: number, silenceMs = 800): Uint8Array {
  const silence = new Int16Array((8 * silenceMs) | 0);
  const tone = Int16Array.from({ length: 8 * toneMs }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
  );
  return mulawEncode(Int16Array.from([...silence, ...tone, ...silence]));
}

/** Feeds audio in 20 ms frames, as Genesys sends it. */
function feed(asr: AzureAsr, audio: Uint8Array): void {
  for (let offset = 0; offset < audio.length; offset += 160) {
    asr.sendAudio(audio.subarray(offset, offset + 160));
  }
}

function listen(asr: AzureAsr): { events: RecognitionEvent[]; errors: string[] } {
  const events: RecognitionEvent[] = [];
  const errors: string[] = [];
  asr.onEvent((e) => events.push(e));
  asr.onError((e) => errors.push(e.message));
  return { events, errors };
}

async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(AzureAsr.name, () => {
  it('posts each spoken utterance as 16 kHz WAV and emits the recognized text in order', async () => {
    const answers = ['I am sad.', 'Hello there.'];
    const server = await fakeAzureStt((res, request) => {
      const text = answers[request.body.length > 40_000 ? 0 : 1];
      json(res, { RecognitionStatus: 'Success', DisplayText: text, Offset: 0, Duration: 1 });
    });
    try {
      const asr = AzureAsr.fromOptions('az-key', null, {
        endpoint: server.url,
        language: 'en-GB',
      });
      const { events, errors } = listen(asr);
      feed(asr, utterance(2000));
      feed(asr, utterance(600));
      await asr.close();
      expect(errors).toEqual([]);
      expect(events).toEqual([
        { kind: 'final', text: 'I am sad.' },
        { kind: 'final', text: 'Hello there.' },
      ]);
      expect(server.received).toHaveLength(2);
      const first = server.received[0]!;
      expect(first.headers['content-type']).toBe('audio/wav; codecs=audio/pcm; samplerate=16000');
      expect(first.url.searchParams.get('language')).toBe('en-GB');
      expect(first.url.searchParams.get('format')).toBe('simple');
      const wav = parseWav(first.body);
      expect(wav.sampleRate).toBe(16_000);
      // The tone (2 s) plus the pre-roll and the trailing silence the detector waits for.
      expect(wav.samples.length / 16_000).toBeGreaterThan(2);
      expect(wav.samples.length / 16_000).toBeLessThan(3.5);
    } finally {
      await server.close();
    }
  });

  it('cuts speech longer than the API limit into several requests without losing audio', async () => {
    const lengths: number[] = [];
    const server = await fakeAzureStt((res, request) => {
      lengths.push(parseWav(request.body).samples.length / 16_000);
      json(res, { RecognitionStatus: 'Success', DisplayText: `part ${lengths.length}` });
    });
    try {
      const asr = AzureAsr.fromOptions('az-key', null, { endpoint: server.url });
      const { events } = listen(asr);
      feed(asr, utterance(70_000));
      await asr.close();
      expect(events).toEqual([
        { kind: 'final', text: 'part 1' },
        { kind: 'final', text: 'part 2' },
      ]);
      expect(lengths[0]).toBeCloseTo(55, 0);
      // 70 s of tone + pre-roll + trailing silence, all of it sent
      expect(lengths[0]! + lengths[1]!).toBeGreaterThan(70.5);
    } finally {
      await server.close();
    }
  });

  it('sends nothing for silence and emits nothing for NoMatch', async () => {
    const server = await fakeAzureStt((res) => json(res, { RecognitionStatus: 'NoMatch' }));
    try {
      const asr = AzureAsr.fromOptions('az-key', null, { endpoint: server.url });
      const { events, errors } = listen(asr);
      feed(asr, new Uint8Array(16_000).fill(0xff));
      feed(asr, utterance(500));
      await asr.close();
      expect(server.received).toHaveLength(1);
      expect(events).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('reports HTTP 401, malformed answers, failed recognition and refused connections as engine errors', async () => {
    let answer = 0;
    const server = await fakeAzureStt((res) => {
      answer++;
      if (answer === 1) res.writeHead(200, { 'Content-Type': 'application/json' }).end('{oops');
      else json(res, { RecognitionStatus: 'BabbleTimeout' });
    });
    try {
      const wrong = AzureAsr.fromOptions('wrong', null, { endpoint: server.url });
      const unauthorized = listen(wrong);
      feed(wrong, utterance(500));
      await wrong.close();
      expect(unauthorized.errors).toEqual(['azure ASR: HTTP 401 Unauthorized']);

      const asr = AzureAsr.fromOptions('az-key', null, { endpoint: server.url });
      const { events, errors } = listen(asr);
      feed(asr, utterance(500));
      feed(asr, utterance(500));
      await asr.close();
      expect(events).toEqual([]);
      expect(errors).toEqual([
        'azure ASR: unreadable response (not a JSON object)',
        'azure ASR: recognition failed (RecognitionStatus BabbleTimeout)',
      ]);
    } finally {
      await server.close();
    }
    const port = await closedPort();
    const refused = AzureAsr.fromOptions('az-key', null, { endpoint: `http://127.0.0.1:${port}/` });
    const { errors } = listen(refused);
    feed(refused, utterance(500, 100));
    await refused.close();
    expect(errors).toEqual([expect.stringMatching(/azure ASR: fetch failed: .*ECONNREFUSED/)]);
  });
});
