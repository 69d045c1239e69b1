import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { type SpeechSynthesizer } from 'src/core';
import { AzureTts, azureSsml } from './azure-tts';

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A local server speaking Azure's TTS REST API (`POST /cognitiveservices/v1`): 401 without the
 * right `Ocp-Apim-Subscription-Key`, otherwise `respond` answers.
 */
async function fakeAzureTts(
  respond: (res: import('node:http').ServerResponse) => void,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (req.headers['ocp-apim-subscription-key'] !== 'az-key') {
        res.writeHead(401, 'Unauthorized').end();
        return;
      }
      respond(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cognitiveservices/v1`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function collect(tts: SpeechSynthesizer, text: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of tts.synthesize(text)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(AzureTts.name, () => {
  it('posts SSML asking for raw µ-law 8 kHz and streams the audio body', async () => {
    const server = await fakeAzureTts((res) => {
      res.writeHead(200, { 'Content-Type': 'audio/basic' });
      res.write(Buffer.alloc(3000, 0xfe));
      setTimeout(() => res.end(Buffer.alloc(1000, 0xfd)), 5);
    });
    try {
      const tts = AzureTts.fromOptions('az-key', 'westeurope', {
        endpoint: server.url,
        voice: 'en-GB-SoniaNeural',
        language: 'en-GB',
      });
      const audio = await collect(tts, 'Fish & <chips>');
      expect(audio.length).toBe(4000);
      expect(audio[0]).toBe(0xfe);
      expect(audio[3999]).toBe(0xfd);
      const request = server.received[0]!;
      expect(request.headers['x-microsoft-outputformat']).toBe('raw-8khz-8bit-mono-mulaw');
      expect(request.headers['content-type']).toBe('application/ssml+xml');
      expect(request.body).toBe(azureSsml('Fish & <chips>', 'en-GB', 'en-GB-SoniaNeural'));
      expect(request.body).toContain("<voice name='en-GB-SoniaNeural'>Fish &amp; &lt;chips&gt;");
      expect(request.body).toContain("xml:lang='en-GB'");
    } finally {
      await server.close();
    }
  });

  it('builds the regional endpoint from the region', () => {
    const tts = AzureTts.fromOptions('k', 'westeurope', {});
    expect((tts as unknown as { options: { endpoint: string } }).options.endpoint).toBe(
      'https://westeurope.tts.speech.microsoft.com/cognitiveservices/v1',
    );
  });

  it('fails clearly on HTTP 401, a refused connection, a non-audio answer and a timeout', async () => {
    let mode: 'json' | 'hang' = 'json';
    const server = await fakeAzureTts((res) => {
      if (mode === 'json') res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      // 'hang': never answers
    });
    try {
      await expect(
        collect(AzureTts.fromOptions('wrong', null, { endpoint: server.url }), 'x'),
      ).rejects.toThrow(/azure TTS: HTTP 401/);
      await expect(
        collect(AzureTts.fromOptions('az-key', null, { endpoint: server.url }), 'x'),
      ).rejects.toThrow(/expected audio, got application\/json/);
      mode = 'hang';
      await expect(
        collect(AzureTts.fromOptions('az-key', null, { endpoint: server.url, timeout: 0.2 }), 'x'),
      ).rejects.toThrow(/azure TTS: timed out/);
    } finally {
      await server.close();
    }
    const port = await closedPort();
    await expect(
      collect(
        AzureTts.fromOptions('az-key', null, { endpoint: `http://127.0.0.1:${port}/x` }),
        'x',
      ),
    ).rejects.toThrow(/azure TTS: fetch failed: .*ECONNREFUSED/);
  });
});
