import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulawSilence, type RecognitionEvent } from 'src/core';
import { readNluYaml } from 'src/core/training-data';
import { UtteranceBuffer } from 'src/core/voice/outbound-audio';
import {
  DEFAULT_POCKETSPHINX_MODEL_DIR,
  PocketsphinxRecognizer,
  pocketsphinxSetup,
} from './pocketsphinx-asr';
import { ProcessTts } from './process-tts';

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures');

function moodbotPhrases(): string[] {
  const file = join(FIXTURES, 'moodbot', 'data', 'nlu.yml');
  return readNluYaml(readFileSync(file, 'utf8'), file).data.examples.map((e) => e.text);
}

async function recognize(
  recognizer: PocketsphinxRecognizer,
  audio: Uint8Array[],
): Promise<string[]> {
  const heard: string[] = [];
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    recognizer.onEvent((event: RecognitionEvent) => {
      heard.push(event.text);
      if (heard.length === audio.length) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  for (const utterance of audio) {
    recognizer.sendAudio(mulawSilence(300));
    recognizer.sendAudio(utterance);
    recognizer.sendAudio(mulawSilence(1200));
  }
  await done;
  await recognizer.close();
  return heard;
}

describe('offline speech engines', () => {
  it('espeak-ng and flite speech is recognized with a grammar from the mood bot NLU examples', async () => {
    const espeak = ProcessTts.fromOptions('espeak-ng', {});
    const flite = ProcessTts.fromOptions('flite', {});
    const audio = [
      await espeak.render('hi'),
      await espeak.render('I am sad'),
      await flite.render('I am sad'),
    ];
    const setup = pocketsphinxSetup({
      modelDir: DEFAULT_POCKETSPHINX_MODEL_DIR,
      phrases: moodbotPhrases(),
    });
    expect(setup.mode).toBe('grammar');
    expect(await recognize(new PocketsphinxRecognizer(setup), audio)).toEqual([
      'hi',
      'i am sad',
      'i am sad',
    ]);
  });

  it('espeak-ng synthesizes µ-law 8 kHz audio and caches it by text', async () => {
    const tts = ProcessTts.fromOptions('espeak-ng', {});
    const chunks: Uint8Array[] = [];
    for await (const chunk of tts.synthesize('hello there')) chunks.push(chunk);
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    expect(bytes).toBeGreaterThan(4000); // more than half a second at 8 kHz
    expect(chunks.every((c) => c.length <= 8000)).toBe(true);
    const again: Uint8Array[] = [];
    for await (const chunk of tts.synthesize('hello there')) again.push(chunk);
    expect(Buffer.concat(again).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('falls back to the full language model without phrases', () => {
    const setup = pocketsphinxSetup({ modelDir: DEFAULT_POCKETSPHINX_MODEL_DIR, phrases: [] });
    expect(setup.mode).toBe('language-model');
    expect(setup.args).toContain('-lm');
  });

  it('buffers a long flite answer into messages of more than 32 KB and at most 64,000 bytes', async () => {
    const tts = ProcessTts.fromOptions('flite', {});
    const buffer = new UtteranceBuffer();
    const messages: Uint8Array[] = [];
    for await (const chunk of tts.synthesize('I am a bot, built with Parley. '.repeat(8))) {
      messages.push(...buffer.push(chunk));
    }
    messages.push(...buffer.end());
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages.slice(0, -1)) expect(m.length).toBeGreaterThan(32_000);
    for (const m of messages) expect(m.length).toBeLessThanOrEqual(64_000);
  });
});
