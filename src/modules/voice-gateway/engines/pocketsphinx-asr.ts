import { Logger } from '@nestjs/common';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
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
  /** `asr.digits`: a loop of spoken digits in the grammar (`auto`: when the examples have numbers). */
  readonly digits?: boolean | 'auto';
}

/** Files for one pocketsphinx set-up: acoustic model, dictionary, grammar or language model. */
export interface PocketsphinxSetup {
  readonly args: readonly string[];
  readonly mode: 'grammar' | 'language-model';
}

/**
 * Initial cepstral mean for telephone audio (8 kHz µ-law upsampled to 16 kHz). The model's
 * `feat.params` carries one for wide-band microphones, and it wins over the command line; with
 * it, pocketsphinx misrecognises the first utterance of every process (its live mean is off
 * until one utterance has updated it: "hello" came out as "oh").
 */
const TELEPHONE_CMNINIT = '50,-1,3,6,-13,-1.5,-2,-2.3,-15,-2,2.5,2.8,-8';

/**
 * A copy of the acoustic model folder in `dir` (symbolic links) whose `feat.params` starts from
 * the telephone cepstral mean. The original is used when it cannot be made.
 */
export function telephoneAcousticModel(hmm: string, dir: string): string {
  const params = join(hmm, 'feat.params');
  const out = join(dir, 'acoustic-model-8k');
  if (existsSync(join(out, 'feat.params'))) return out;
  try {
    const text = readFileSync(params, 'utf8');
    if (!/^-cmninit /m.test(text)) return hmm;
    mkdirSync(out, { mode: 0o700 });
    for (const entry of readdirSync(hmm)) {
      if (entry !== 'feat.params') symlinkSync(join(hmm, entry), join(out, entry));
    }
    writeFileSync(
      join(out, 'feat.params'),
      text.replace(/^-cmninit .*$/m, `-cmninit ${TELEPHONE_CMNINIT}`),
      { mode: 0o600 },
    );
    return out;
  } catch {
    return hmm;
  }
}

/** Options of pocketsphinx's own endpointing: the speech gate does the real work. */
// postspeech (500 ms) is longer than the gate's hangover, so pocketsphinx does not split an
// utterance the gate keeps whole; the tail padding closes it at once.
const VAD_ARGS = ['-vad_prespeech', '30', '-vad_postspeech', '50'];

/**
 * The set-up for the given phrases. A grammar is written into `grammarDir` (a private folder of
 * the server, see `SpeechEngineFactory`), named by its content.
 */
export function pocketsphinxSetup(
  options: PocketsphinxOptions,
  grammarDir: string,
): PocketsphinxSetup {
  const hmm = join(options.modelDir, 'en-us');
  const dict = join(options.modelDir, 'cmudict-en-us.dict');
  if (!existsSync(hmm) || !existsSync(dict)) {
    throw new Error(
      `pocketsphinx model not found in ${options.modelDir} (install the Debian packages pocketsphinx pocketsphinx-en-us)`,
    );
  }
  const model = telephoneAcousticModel(hmm, grammarDir);
  const base = ['-hmm', model, '-dict', dict, '-time', 'yes', ...VAD_ARGS];
  const words = loadDictionary(dict);
  const grammar =
    options.phrases.length > 0
      ? buildJsgf(options.phrases, (w) => words.has(w), options.digits ?? 'auto')
      : null;
  if (grammar === null) {
    return {
      args: [...base, '-lm', join(options.modelDir, 'en-us.lm.bin')],
      mode: 'language-model',
    };
  }
  const file = join(
    grammarDir,
    `grammar-${createHash('sha256').update(grammar).digest('hex').slice(0, 16)}.jsgf`,
  );
  if (!existsSync(file)) writeFileSync(file, grammar, { mode: 0o600 });
  return { args: [...base, '-jsgf', file], mode: 'grammar' };
}

/** Silence around each utterance: pocketsphinx's endpointing needs it to close the utterance. */
const LEAD_MS = 300;
const COMFORT_NOISE_RMS = 100;
const TAIL_MS = 700;
const WORD_TIME = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\d+(?:\.\d+)?)$/;

/** Not words: pocketsphinx's silence and noise tokens. */
function isFillerToken(word: string): boolean {
  return word.startsWith('<') || word.startsWith('[') || word.startsWith('+');
}

/**
 * Offline ASR: one long-running `pocketsphinx_continuous` per call, fed 16 kHz 16-bit PCM
 * (µ-law decoded and upsampled from 8 kHz). It is gated: it hears only what the call's speech
 * gate lets through, with quiet padding before each utterance and, at the gate's end of speech,
 * enough padding at once for pocketsphinx to close the utterance without waiting in real time.
 * Each hypothesis it prints is a final transcript; its word posteriors (`-time yes`) give the
 * confidence (the lowest word's). No interim results.
 */
export class PocketsphinxRecognizer implements SpeechRecognizer {
  readonly gated = true;
  private readonly logger = new Logger(PocketsphinxRecognizer.name);
  private readonly child: ChildProcess;
  private readonly audioIn: Socket;
  private readonly dir: string;
  private readonly listeners: Array<(event: RecognitionEvent) => void> = [];
  private readonly errorListeners: Array<(error: Error) => void> = [];
  private pending = '';
  private stderrTail = '';
  private hypothesis: { text: string; confidence: number | null } | null = null;
  private closed = false;
  private inUtterance = false;
  private seed = 1;
  private readyValue = false;
  /** Resolves when the process has exited and its folder is removed. */
  readonly exited: Promise<void>;
  /** Resolves when the model is loaded (or the process ended). */
  readonly ready: Promise<void>;

  constructor(setup: PocketsphinxSetup) {
    // Node's stdio pipes are sockets, which pocketsphinx cannot open as `-infile`: audio goes
    // through a named pipe instead.
    this.dir = mkdtempSync(join(tmpdir(), 'parley-asr-'));
    const fifo = join(this.dir, 'audio.raw');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    this.child = spawn('pocketsphinx_continuous', ['-infile', fifo, ...setup.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
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
    let markReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (markReady = resolve));
    void this.exited.then(() => markReady());
    this.child.on('error', (error) => this.emitError(new Error(`pocketsphinx: ${error.message}`)));
    const stdout = this.child.stdout;
    const stderr = this.child.stderr;
    if (stdout === null || stderr === null) throw new Error('pocketsphinx has no stdout');
    // The log goes to stderr: the banner after the model is loaded says it is ready.
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => {
      if (this.readyValue) return;
      this.stderrTail = (this.stderrTail + chunk).slice(-400);
      if (this.stderrTail.includes('COMPILED ON')) {
        this.readyValue = true;
        this.stderrTail = '';
        markReady();
      }
    });
    stdout.setEncoding('utf8');
    stdout.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.on('close', (code) => {
      if (!this.closed && code !== 0) this.emitError(new Error(`pocketsphinx exited with ${code}`));
    });
  }

  /** The model is loaded and the process waits for audio. */
  get isReady(): boolean {
    return this.readyValue;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  sendAudio(audio: Uint8Array): void {
    if (this.closed) return;
    if (!this.inUtterance) {
      this.inUtterance = true;
      this.writePcm(new Int16Array(16 * LEAD_MS));
    }
    this.writePcm(upsample2x(mulawDecode(audio)));
  }

  endOfSpeech(): void {
    if (this.closed || !this.inUtterance) return;
    this.inUtterance = false;
    this.writePcm(new Int16Array(16 * TAIL_MS));
  }

  onEvent(listener: (event: RecognitionEvent) => void): void {
    this.listeners.push(listener);
  }

  onError(listener: (error: Error) => void): void {
    this.errorListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.closed) {
      await this.exited;
      return;
    }
    this.closed = true;
    this.audioIn.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * Writes 16 kHz PCM with faint comfort noise (RMS ~100 of 32768, well below speech). Digital
   * silence upsets pocketsphinx's noise floor, and upsampled telephone audio leaves the model's
   * 4–6.8 kHz filters empty, which skews the cepstra: "hello" came out as "oh" without it.
   */
  private writePcm(pcm: Int16Array): void {
    for (let i = 0; i < pcm.length; i++) {
      let sum = 0;
      for (let k = 0; k < 4; k++) {
        this.seed = (this.seed * 1103515245 + 12345) >>> 0;
        sum += this.seed / 0x100000000;
      }
      // sum of 4 uniforms: mean 2, standard deviation 0.577
      const noise = (sum - 2) * COMFORT_NOISE_RMS * 1.732;
      pcm[i] = Math.max(-32768, Math.min(32767, Math.round((pcm[i] ?? 0) + noise)));
    }
    this.audioIn.write(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }

  /** A hypothesis line, then its word lines (`word start end posterior`), in one write. */
  private onStdout(chunk: string): void {
    this.pending += chunk;
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      const line = this.pending.slice(0, newline).trim();
      this.pending = this.pending.slice(newline + 1);
      const word = WORD_TIME.exec(line);
      if (word !== null && this.hypothesis !== null) {
        const token = word[1] ?? '';
        const posterior = Number(word[4]);
        if (!isFillerToken(token) && Number.isFinite(posterior)) {
          this.hypothesis.confidence = Math.min(this.hypothesis.confidence ?? 1, posterior);
        }
      } else if (word === null) {
        this.emitHypothesis();
        this.hypothesis = { text: line, confidence: null };
      }
      newline = this.pending.indexOf('\n');
    }
    if (this.pending.length === 0) this.emitHypothesis();
  }

  private emitHypothesis(): void {
    const hypothesis = this.hypothesis;
    this.hypothesis = null;
    if (hypothesis === null) return;
    // empty hypotheses are passed on too: the call's transcript filter drops them
    const event: RecognitionEvent = {
      kind: 'final',
      text: hypothesis.text,
      ...(hypothesis.confidence !== null ? { confidence: hypothesis.confidence } : {}),
    };
    for (const listener of this.listeners) listener(event);
  }

  private emitError(error: Error): void {
    if (this.errorListeners.length === 0) this.logger.warn(error.message);
    for (const listener of this.errorListeners) listener(error);
  }
}
