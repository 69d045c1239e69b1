import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AudioHookClient } from 'test/utils/audiohook-client';
import { MOODBOT, MOODBOT_DIR, trainBot } from 'test/utils/bots';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import { waitForUserText as waitForUserTextOf } from 'test/utils/voice';
import { WebSocketServer } from 'ws';
import { stringify } from 'yaml';

const BOT = MOODBOT_DIR;
const API_KEY = 'voice-cloud-test-key';

/**
 * Local servers speaking Deepgram's /v1/listen and Cartesia's /tts/websocket protocols. The
 * listen fake answers each 1,600 bytes of caller audio with the next scripted transcript; the
 * Cartesia fake answers with 1,000 bytes of 0x42 per utterance, or an `error` message while
 * `cartesiaFails` is set. `refuseListen` makes the listen fake answer the upgrade with 401.
 */
async function fakeProviders(): Promise<{
  listenUrl: string;
  cartesiaUrl: string;
  transcripts: string[];
  spoken: string[];
  state: { cartesiaFails: boolean; refuseListen: boolean; refused: number };
  close: () => Promise<void>;
}> {
  const transcripts: string[] = [];
  const spoken: string[] = [];
  const state = { cartesiaFails: false, refuseListen: false, refused: 0 };
  const listen = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: ({ req }, done) => {
      const ok = !state.refuseListen && req.headers.authorization === 'Token dg-key';
      if (!ok) state.refused++;
      done(ok, 401);
    },
  });
  listen.on('connection', (ws) => {
    let audio = 0;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        const message = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
        if (message.type === 'CloseStream') ws.close(1000);
        return;
      }
      audio += (data as Buffer).length;
      if (audio >= 1600) {
        audio -= 1600;
        const transcript = transcripts.shift();
        if (transcript === undefined) return;
        ws.send(
          JSON.stringify({
            type: 'Results',
            is_final: true,
            speech_final: true,
            channel: { alternatives: [{ transcript, confidence: 0.99 }] },
          }),
        );
      }
    });
  });
  const cartesia = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: ({ req }, done) => done(req.headers['x-api-key'] === 'ca-key', 401),
  });
  cartesia.on('connection', (ws) => {
    ws.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as {
        transcript: string;
        context_id: string;
      };
      spoken.push(message.transcript);
      const context_id = message.context_id;
      if (state.cartesiaFails) {
        ws.send(JSON.stringify({ type: 'error', context_id, done: true, error: 'quota exceeded' }));
        return;
      }
      const data64 = Buffer.alloc(1000, 0x42).toString('base64');
      ws.send(JSON.stringify({ type: 'chunk', context_id, done: false, data: data64 }));
      ws.send(JSON.stringify({ type: 'done', context_id, done: true }));
    });
  });
  await Promise.all(
    [listen, cartesia].map((s) => new Promise<void>((resolve) => s.once('listening', resolve))),
  );
  const port = (s: WebSocketServer): number => (s.address() as AddressInfo).port;
  return {
    listenUrl: `ws://127.0.0.1:${port(listen)}/v1/listen`,
    cartesiaUrl: `ws://127.0.0.1:${port(cartesia)}/tts/websocket`,
    transcripts,
    spoken,
    state,
    close: async () => {
      for (const s of [listen, cartesia]) {
        for (const client of s.clients) client.terminate();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}

/**
 * A call to the moodbot with the cloud engines (`deepgram` ASR, `cartesia` TTS) pointed at local
 * fakes of their protocols: transcripts become user messages, replies come back as the
 * provider's µ-law audio, and provider failures end the turn without ending the call.
 */
describe('a Genesys call with cloud speech engines (e2e)', () => {
  let dir: string;
  let t: TestApp;
  let wsUrl: string;
  let fakes: Awaited<ReturnType<typeof fakeProviders>>;

  beforeAll(async () => {
    fakes = await fakeProviders();
    dir = mkdtempSync(join(tmpdir(), 'parley-voice-cloud-'));
    cpSync(join(BOT, 'data'), join(dir, 'data'), { recursive: true });
    trainBot({ ...MOODBOT, data: [join(dir, 'data')] }, join(dir, 'models'));
    writeFileSync(
      join(dir, 'credentials.yml'),
      stringify({
        genesys: {
          api_key: API_KEY,
          server_url: 'localhost',
          asr: { name: 'deepgram', endpoint: fakes.listenUrl, model: 'nova-test' },
          tts: { name: 'cartesia', endpoint: fakes.cartesiaUrl, voice: 'voice-1' },
        },
      }),
    );
    t = await startTestApp({
      env: {
        PARLEY_CREDENTIALS: join(dir, 'credentials.yml'),
        DEEPGRAM_API_KEY: 'dg-key',
        CARTESIA_API_KEY: 'ca-key',
      },
    });
    await request(t.url)
      .put('/model')
      .send({ model_file: join(dir, 'models') })
      .expect(204);
    wsUrl = `${t.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await fakes?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const waitForUserText = (id: string, text: string): Promise<void> =>
    waitForUserTextOf(t.url, id, text, 100);

  it('hears the caller through Deepgram, answers with Cartesia audio, and survives a failing TTS turn', async () => {
    const client = await AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY });
    const conversationId = randomUUID();
    client.open({ conversationId });
    await client.waitForType('opened');

    // "hi" → utter_greet, synthesized by the Cartesia fake
    fakes.transcripts.push('hi');
    await client.stream(Buffer.alloc(1600, 0x7f));
    await waitForUserText(conversationId, 'hi');
    await client.waitFor(() => client.audio.length >= 1, 15_000, 'greeting audio');
    expect(client.audio[0]!.data).toEqual(Buffer.alloc(1000, 0x42));
    expect(fakes.spoken).toContain('Hi there! How is your day going?');

    // The TTS provider fails: the turn ends without audio, the call goes on
    fakes.state.cartesiaFails = true;
    const spokenBefore = fakes.spoken.length;
    fakes.transcripts.push('I am sad');
    await client.stream(Buffer.alloc(1600, 0x7f));
    await waitForUserText(conversationId, 'I am sad');
    // utter_cheer_up and utter_did_that_help: two failed syntheses
    await client.waitFor(() => fakes.spoken.length >= spokenBefore + 2, 15_000, 'failed syntheses');
    client.send('ping');
    await client.waitForType('pong');
    const audioBefore = client.audio.length;

    // ... and the next turn is spoken again
    fakes.state.cartesiaFails = false;
    fakes.transcripts.push('yes');
    await client.stream(Buffer.alloc(1600, 0x7f));
    await waitForUserText(conversationId, 'yes');
    await client.waitFor(() => client.audio.length > audioBefore, 15_000, 'reply audio');

    client.send('close', { reason: 'end' });
    await client.waitForType('closed');
    client.close();
    expect(client.violations).toEqual([]);
  });

  it('keeps the call usable when the recognizer is refused (HTTP 401)', async () => {
    fakes.state.refuseListen = true;
    try {
      const client = await AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY });
      client.open({ conversationId: randomUUID() });
      await client.waitForType('opened');
      await client.stream(Buffer.alloc(3200, 0x7f));
      await client.waitFor(() => fakes.state.refused > 0, 15_000, 'the refused recognizer');
      client.send('ping');
      await client.waitForType('pong');
      await request(t.url).get('/').expect(200);
      client.send('close', { reason: 'end' });
      await client.waitForType('closed');
      client.close();
      expect(client.violations).toEqual([]);
    } finally {
      fakes.state.refuseListen = false;
    }
  });
});
