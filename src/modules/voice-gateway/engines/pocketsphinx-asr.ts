import { Logger } from '@nestjs/common';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildJsgf,
  mulawDecode,
  type RecognitionEvent,
  type SpeechRecognizer,
  upsample2x,
} from 'src/core';

export const DEFAULT_POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

const dictionaries = new Map<string, Set<string>>();

/** Words of a CMU pronunciation dictionary (alternates like `read(2)` folded). */
export function loadDictionary(path: string): Set<string> {
  let words = dictionaries.get(path);
  if (words === undefined) {
    words = new Set(
      readFileSync(path, 'utf8')
        .split('\n')
        .map((line) => line.split(/\s/, 1)[0]?.replace(/\(\d+\)$/, '') ?? '')
        .filter((w) => w.length > 0),
    );
    dictionaries.set(path, words);
  }
  return words;
}

export interface PocketsphinxOptions {
  readonly modelDir: string;
  /** Expected phrases (NLU examples, buttons); empty → the full language model. */
  readonly phrases: readonly string[];
}

/** Files for one pocketsphinx set-up: acoustic model, dictionary, grammar or language model. */
export interface PocketsphinxSetup {
  readonly args: readonly string[];
  readonly mode: 'grammar' | 'language-model';
}

export function pocketsphinxSetup(options: PocketsphinxOptions): PocketsphinxSetup {
  const hmm = join(options.modelDir, 'en-us');
  const dict = join(options.modelDir, 'cmudict-en-us.dict');
  if (!existsSync(hmm) || !existsSync(dict)) {
    throw new Error(
      `pocketsphinx model not found in ${options.modelDir} (install the Debian packages pocketsphinx pocketsphinx-en-us)`,
    );
  }
  const base = ['-hmm', hmm, '-dict', dict, '-logfn', '/dev/null'];
  const words = loadDictionary(dict);
  const grammar =
    options.phrases.length > 0 ? buildJsgf(options.phrases, (w) => words.has(w)) : null;
  if (grammar === null) {
    return {
      args: [...base, '-lm', join(options.modelDir, 'en-us.lm.bin')],
      mode: 'language-model',
    };
  }
  const dir = join(tmpdir(), 'parley-voice');
  mkdirSync(dir, { recursive: true });
  const file = join(
    dir,
    `grammar-${createHash('sha256').update(grammar).digest('hex').slice(0, 16)}.jsgf`,
  );
  if (!existsSync(file)) writeFileSync(file, grammar);
  return { args: [...base, '-jsgf', file], mode: 'grammar' };
}

/**
 * Offline ASR: one long-running `pocketsphinx_continuous` per call, fed 16 kHz 16-bit PCM
 * (µ-law decoded and upsampled from 8 kHz); each line it prints is a final transcript (its own
 * voice-activity detection ends utterances). No interim results.
 */
export class PocketsphinxRecognizer implements SpeechRecognizer {
  private readonly logger = new Logger(PocketsphinxRecognizer.name);
  private readonly child: ChildProcess;
  private readonly audioIn: Socket;
  private readonly dir: string;
  private readonly listeners: Array<(event: RecognitionEvent) => void> = [];
  private readonly errorListeners: Array<(error: Error) => void> = [];
  private pending = '';
  private closed = false;
  private seed = 1;
  private readonly exited: Promise<void>;

  constructor(setup: PocketsphinxSetup) {
    // Node's stdio pipes are sockets, which pocketsphinx cannot open as `-infile`: audio goes
    // through a named pipe instead.
    this.dir = mkdtempSync(join(tmpdir(), 'parley-asr-'));
    const fifo = join(this.dir, 'audio.raw');
    execFileSync('mkfifo', [fifo]);
    this.child = spawn('pocketsphinx_continuous', ['-infile', fifo, ...setup.args], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // Opened read-write so the open never blocks (a write-only open waits for the reader), and
    // driven by the event loop as a pipe socket, so a stalled reader never ties up a thread.
    this.audioIn = new Socket({
      fd: openSync(fifo, constants.O_RDWR),
      readable: false,
      writable: true,
    });
    this.audioIn.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      this.child.on('close', () => {
        this.audioIn.destroy();
        rmSync(this.dir, { recursive: true, force: true });
        resolve();
      }),
    );
    this.child.on('error', (error) => this.emitError(new Error(`pocketsphinx: ${error.message}`)));
    const stdout = this.child.stdout;
    if (stdout === null) throw new Error('pocketsphinx has no stdout');
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => {
      this.pending += chunk;
      let newline = this.pending.indexOf('\n');
      while (newline >= 0) {
        const line = this.pending.slice(0, newline).trim();
        this.pending = this.pending.slice(newline + 1);
        if (line.length > 0) {
          for (const listener of this.listeners) listener({ kind: 'final', text: line });
        }
        newline = this.pending.indexOf('\n');
      }
    });
    this.child.on('close', (code) => {
      if (!this.closed && code !== 0) this.emitError(new Error(`pocketsphinx exited with ${code}`));
    });
  }

  sendAudio(audio: Uint8Array): void {
    if (this.closed) return;
    const pcm = upsample2x(mulawDecode(audio));
    // Digital silence (all 0xFF) breaks pocketsphinx's noise-floor estimate, after which it
    // misses the next utterance: add inaudible dither (±4 of 32768).
    for (let i = 0; i < pcm.length; i++) {
      this.seed = (this.seed * 1103515245 + 12345) >>> 0;
      pcm[i] = Math.max(-32768, Math.min(32767, (pcm[i] ?? 0) + ((this.seed >>> 16) % 9) - 4));
    }
    this.audioIn.write(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }

  onEvent(listener: (event: RecognitionEvent) => void): void {
    this.listeners.push(listener);
  }

  onError(listener: (error: Error) => void): void {
    this.errorListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.audioIn.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await this.exited;
    clearTimeout(timer);
  }

  private emitError(error: Error): void {
    if (this.errorListeners.length === 0) this.logger.warn(error.message);
    for (const listener of this.errorListeners) listener(error);
  }
}
