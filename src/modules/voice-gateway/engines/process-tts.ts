import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulawEncode, parseWav, resample, type SpeechSynthesizer } from 'src/core';
import { LruCache } from './lru-cache';
import { runProcess } from './run-process';

/** Chunk size of synthesized audio handed on (1 s at 8 kHz). */
const CHUNK_BYTES = 8000;

/**
 * Offline TTS through a local program (`flite` or `espeak-ng`) run as a child process with an
 * argument array; its WAV output is resampled to 8 kHz and µ-law encoded. Results are cached by
 * text (LRU, `cache_size` entries, default 1000); calls asking for the same text at once share
 * one synthesis.
 */
export class ProcessTts implements SpeechSynthesizer {
  private readonly cache: LruCache<string, Uint8Array>;
  /** Syntheses in progress by text: calls asking for the same text at once share one process. */
  private readonly inFlight = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly engine: 'flite' | 'espeak-ng',
    private readonly voice: string,
    cacheSize: number,
  ) {
    this.cache = new LruCache(cacheSize);
  }

  static fromOptions(
    engine: 'flite' | 'espeak-ng',
    options: Readonly<Record<string, unknown>>,
  ): ProcessTts {
    const voice =
      typeof options.voice === 'string' ? options.voice : engine === 'flite' ? 'slt' : 'en-us';
    const cacheSize = typeof options.cache_size === 'number' ? options.cache_size : 1000;
    return new ProcessTts(engine, voice, cacheSize);
  }

  async *synthesize(text: string): AsyncIterable<Uint8Array> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean.length === 0) return;
    let audio = this.cache.get(clean);
    if (audio === undefined) {
      let pending = this.inFlight.get(clean);
      if (pending === undefined) {
        pending = this.render(clean).finally(() => this.inFlight.delete(clean));
        this.inFlight.set(clean, pending);
      }
      audio = await pending;
      this.cache.set(clean, audio);
    }
    for (let offset = 0; offset < audio.length; offset += CHUNK_BYTES) {
      yield audio.subarray(offset, Math.min(audio.length, offset + CHUNK_BYTES));
    }
  }

  /** Synthesizes without the cache (used by tests to make caller audio). */
  async render(text: string): Promise<Uint8Array> {
    const wav = this.engine === 'flite' ? await this.runFlite(text) : await this.runEspeak(text);
    const pcm = parseWav(wav);
    return mulawEncode(resample(pcm.samples, pcm.sampleRate, 8000));
  }

  private runEspeak(text: string): Promise<Buffer> {
    return runProcess('espeak-ng', ['-v', this.voice, '--stdout', '--stdin'], text);
  }

  /** flite cannot write WAV into Node's stdout socket, so it writes a temporary file. */
  private async runFlite(text: string): Promise<Buffer> {
    const dir = await mkdtemp(join(tmpdir(), 'parley-tts-'));
    const file = join(dir, 'out.wav');
    try {
      await runProcess('flite', ['-voice', this.voice, '-t', text, '-o', file]);
      return await readFile(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
