import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulawSilence } from 'src/core';
import { ProcessTts } from 'src/modules/voice-gateway/engines/process-tts';
import request from 'supertest';
import { AudioHookClient, type ServerMessage } from 'test/utils/audiohook-client';
import { botFiles, MOODBOT, MOODBOT_DIR, trainBot } from 'test/utils/bots';
import { startTestApp, type TestApp } from 'test/utils/create-test-app';
import { waitForUserText as waitForUserTextOf } from 'test/utils/voice';
import { parse, stringify } from 'yaml';

const BOT = MOODBOT_DIR;
const API_KEY = 'voice-call-test-key';

/**
 * A whole phone call against the real moodbot: caller speech synthesized by espeak-ng, recognized
 * by pocketsphinx, answered by the dialogue processor, spoken back by flite as µ-law audio. The
 * moodbot's goodbye response is given a `custom: {hangup: true}` payload so the bot ends the call.
 */
describe('a Genesys call to the moodbot (e2e)', () => {
  let dir: string;
  let t: TestApp;
  let wsUrl: string;
  const caller = ProcessTts.fromOptions('espeak-ng', {});
  const speech = async (text: string): Promise<Buffer> =>
    Buffer.concat([mulawSilence(400), await caller.render(text), mulawSilence(1400)]);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-voice-call-'));
    cpSync(join(BOT, 'data'), join(dir, 'data'), { recursive: true });
    const domain = parse(readFileSync(join(BOT, 'domain.yml'), 'utf8')) as {
      responses: Record<string, unknown[]>;
    };
    domain.responses.utter_goodbye = [{ text: 'See you later!', custom: { hangup: true } }];
    writeFileSync(join(dir, 'domain.yml'), stringify(domain));
    trainBot({ ...botFiles(dir), config: MOODBOT.config }, join(dir, 'models'));
    writeFileSync(
      join(dir, 'credentials.yml'),
      stringify({
        genesys: {
          api_key: API_KEY,
          server_url: 'localhost',
          // No asr.training_data: the grammar comes from the loaded model (its NLU examples,
          // stored in the archive at training, and its buttons).
          asr: { name: 'pocketsphinx' },
          tts: { name: 'flite', voice: 'slt' },
          interruptions: { enabled: true, min_words: 2 },
          silence_timeout: 1,
          output_variables: ['session_started_metadata'],
        },
      }),
    );
    t = await startTestApp({ env: { PARLEY_CREDENTIALS: join(dir, 'credentials.yml') } });
    await request(t.url)
      .put('/model')
      .send({ model_file: join(dir, 'models') })
      .expect(204);
    wsUrl = `${t.url.replace('http', 'ws')}/webhooks/genesys/websocket`;
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tracker = async (
    id: string,
  ): Promise<{ events: Array<Record<string, unknown>>; slots: Record<string, unknown> }> =>
    (await request(t.url).get(`/conversations/${id}/tracker`).expect(200)).body;

  const waitForUserText = (id: string, text: string): Promise<void> =>
    waitForUserTextOf(t.url, id, text, 200);

  it('recognizes the caller, answers with audio, barges in, times out on silence and hangs up with outputVariables', async () => {
    const client = await AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY });
    client.autoPlayback = false; // this test plays back by hand
    const conversationId = '090eaa2f-72fa-480a-83e0-8667ff89c0ec';
    client.open({
      conversationId,
      participant: {
        id: '883efee8-3d6c-4537-b500-6d7ca4b92fa0',
        ani: 'tel:+14155550100',
        aniName: '',
        dnis: '+18005550199',
      },
    });
    await client.waitForType('opened');

    // /session_start with the call metadata fills session_started_metadata
    await waitForUserText(conversationId, '/session_start');
    expect((await tracker(conversationId)).slots.session_started_metadata).toMatchObject({
      call_id: conversationId,
      user_phone: '+14155550100',
      bot_phone: '+18005550199',
    });

    // "hi" → utter_greet, one utterance → one binary message
    await client.stream(await speech('hi'));
    await client.waitFor(() => client.audio.length >= 1, 20_000, 'greeting audio');
    await waitForUserText(conversationId, 'hi');
    const greeting = client.audio.length;
    expect(greeting).toBe(1);

    // the caller speaks while the greeting plays: barge-in, then the unhappy path answers with
    // two utterances → two separate binary messages
    client.send('playback_started');
    await client.stream(await speech('I am sad'));
    const bargeIn = await client.waitForType('event');
    expect(bargeIn.parameters).toEqual({ entities: [{ type: 'barge_in', data: {} }] });
    await waitForUserText(conversationId, 'i am sad');
    await client.waitFor(() => client.audio.length >= greeting + 2, 20_000, 'two reply utterances');
    client.send('playback_completed');

    // REST still served on the same port while the call runs
    await request(t.url).get('/').expect(200);
    client.send('ping');
    await client.waitForType('pong');

    // silence after the bot finished speaking → /silence_timeout
    client.send('playback_started');
    client.send('playback_completed');
    await waitForUserText(conversationId, '/silence_timeout');

    // "bye" → utter_goodbye with a hangup payload: disconnect `completed` only after playback
    const before = client.audio.length;
    await client.stream(await speech('bye'));
    await client.waitFor(() => client.audio.length > before, 20_000, 'goodbye audio');
    await new Promise((r) => setTimeout(r, 300));
    expect(client.messages.some((m) => m.type === 'disconnect')).toBe(false);
    client.send('playback_started');
    client.send('playback_completed');
    const disconnect: ServerMessage = await client.waitForType('disconnect');
    expect(disconnect.parameters.reason).toBe('completed');
    expect(
      JSON.parse(disconnect.parameters.outputVariables.session_started_metadata),
    ).toMatchObject({
      call_id: conversationId,
      user_phone: '+14155550100',
    });
    await client.waitForType('closed'); // the client answered with close
    await client.waitForClose();

    // bot audio: µ-law, at most 64,000 bytes a message, within 25 at once + 5 per second
    const sizes = client.audio.map((a) => a.data.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(64_000);
    expect(sizes.every((s) => s > 0)).toBe(true);
    const span = (client.audio.at(-1)!.at - client.audio[0]!.at) / 1000;
    expect(client.audio.length).toBeLessThanOrEqual(25 + 5 * span);
    expect(client.violations).toEqual([]);
  }, 120_000);

  it('sends /session_end when the caller hangs up', async () => {
    const client = await AudioHookClient.connect({ url: wsUrl, apiKey: API_KEY });
    const conversationId = 'a1b2c3d4-72fa-480a-83e0-8667ff89c0ec';
    client.open({ conversationId });
    await client.waitForType('opened');
    await waitForUserText(conversationId, '/session_start');
    client.send('close', { reason: 'end' });
    await client.waitForType('closed');
    client.close();
    await waitForUserText(conversationId, '/session_end');
  }, 60_000);
});
