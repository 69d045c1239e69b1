import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RecognitionEvent, type SpeechRecognizer } from 'src/core';
import { readNluYaml } from 'src/core/training-data';
import { UtteranceBuffer } from 'src/core/voice/outbound-audio';
import {
  DEFAULT_POCKETSPHINX_MODEL_DIR,
  PocketsphinxRecognizer,
  pocketsphinxSetup,
} from './pocketsphinx-asr';
import { ProcessTts } from './process-tts';
import { RecognizerPool } from './recognizer-pool';

/** Pids of this process's pocketsphinx children, from /proc. */
function pocketsphinxChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm.startsWith('pocketsphinx')) out.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

const FIXTURES = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures');

function moodbotPhrases(): string[] {
  const file = join(FIXTURES, 'moodbot', 'data', 'nlu.yml');
  return readNluYaml(readFileSync(file, 'utf8'), file).data.examples.map((e) => e.text);
}

async function recognize(recognizer: SpeechRecognizer, audio: Uint8Array[]): Promise<string[]> {
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
  // the recogniser is gated: each utterance, then the end of speech
  for (const utterance of audio) {
    recognizer.sendAudio(utterance);
    recognizer.endOfSpeech?.();
  }
  await done;
  await recognizer.close();
  return heard;
}

describe('offline speech engines', () => {
  let grammarDir: string;
  beforeAll(() => (grammarDir = mkdtempSync(join(tmpdir(), 'parley-asr-spec-'))));
  afterAll(() => rmSync(grammarDir, { recursive: true, force: true }));

  it('espeak-ng and flite speech is recognized with a grammar from the mood bot NLU examples', async () => {
    const espeak = ProcessTts.fromOptions('espeak-ng', {});
    const flite = ProcessTts.fromOptions('flite', {});
    const audio = [
      await espeak.render('hi'),
      await espeak.render('I am sad'),
      await flite.render('I am sad'),
    ];
    const setup = pocketsphinxSetup(
      {
        modelDir: DEFAULT_POCKETSPHINX_MODEL_DIR,
        phrases: moodbotPhrases(),
      },
      grammarDir,
    );
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
    const setup = pocketsphinxSetup(
      { modelDir: DEFAULT_POCKETSPHINX_MODEL_DIR, phrases: [] },
      grammarDir,
    );
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

  it('shares warm processes between calls, bounded by the pool size, and stops them all on close', async () => {
    const setup = pocketsphinxSetup(
      { modelDir: DEFAULT_POCKETSPHINX_MODEL_DIR, phrases: moodbotPhrases() },
      grammarDir,
    );
    const pool = new RecognizerPool(2);
    pool.warm(setup);
    const deadline = Date.now() + 20_000;
    while (pool.idleCount < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(pool.idleCount).toBe(2);
    const espeak = ProcessTts.fromOptions('espeak-ng', {});
    const flite = ProcessTts.fromOptions('flite', {});
    // five calls speaking at once share the two processes; each hears only its own words
    const calls = Array.from({ length: 5 }, () => pool.acquire(setup));
    const said = ['hello', 'i am sad', 'goodbye', 'i am sad', 'hello'];
    const heard = await Promise.all(
      calls.map(async (call, i) => {
        const tts = i % 2 === 0 ? espeak : flite;
        return recognize(call, [await tts.render(said[i] ?? '')]);
      }),
    );
    expect(heard).toEqual(said.map((s) => [s]));
    expect(pool.processCount).toBe(2);
    expect(pocketsphinxChildren()).toHaveLength(2);
    await pool.close();
    expect(pool.processCount).toBe(0);
    expect(pocketsphinxChildren()).toEqual([]);
    expect(() => new RecognizerPool(17)).toThrow('pool size');
  });
});
