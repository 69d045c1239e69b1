import { Logger } from '@nestjs/common';
import {
  encodeWav,
  EnergyVad,
  mulawDecode,
  type RecognitionEvent,
  type SpeechRecognizer,
  upsample2x,
} from 'src/core';
import { fetchFailure } from './azure-tts';

/** Audio kept from before the detector noticed speech (300 ms of µ-law 8 kHz). */
const PREROLL_BYTES = 2400;
/** The short-audio API takes at most 60 s; longer speech is cut into 55 s utterances. */
const MAX_UTTERANCE_BYTES = 55 * 8000;

export interface AzureAsrOptions {
  readonly apiKey: string;
  /** Full URL of `speech/recognition/conversation/cognitiveservices/v1`. */
  readonly endpoint: string;
  readonly language: string;
  readonly timeoutMs: number;
}

interface SimpleResult {
  RecognitionStatus?: unknown;
  DisplayText?: unknown;
}

/**
 * Azure speech to text through the REST API for short audio: the caller's audio is cut into
 * utterances by an energy voice-activity detector (speech start/end), and each utterance is
 * POSTed as 16 kHz 16-bit WAV (µ-law decoded, upsampled 8 → 16 kHz; the API takes no µ-law) to
 * `https://<region>.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1
 * ?language=…&format=simple`; `RecognitionStatus: Success` → a final transcript (`DisplayText`).
 * Results are delivered in the order the utterances were spoken. No interim results (the API has
 * none). Auth: `Ocp-Apim-Subscription-Key: <AZURE_SPEECH_KEY>`.
 */
export class AzureAsr implements SpeechRecognizer {
  private readonly logger = new Logger(AzureAsr.name);
  private readonly vad = new EnergyVad();
  private readonly listeners: Array<(event: RecognitionEvent) => void> = [];
  private readonly errorListeners: Array<(error: Error) => void> = [];
  private preroll: Buffer[] = [];
  private prerollBytes = 0;
  private utterance: Buffer[] | null = null;
  private utteranceBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: AzureAsrOptions) {}

  static fromOptions(
    apiKey: string,
    region: string | null,
    options: Readonly<Record<string, unknown>>,
  ): AzureAsr {
    const where = typeof options.region === 'string' ? options.region : region;
    return new AzureAsr({
      apiKey,
      endpoint:
        typeof options.endpoint === 'string'
          ? options.endpoint
          : `https://${where ?? 'eastus'}.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1`,
      language: typeof options.language === 'string' ? options.language : 'en-US',
      timeoutMs: typeof options.timeout === 'number' ? options.timeout * 1000 : 10_000,
    });
  }

  sendAudio(audio: Uint8Array): void {
    if (this.closed) return;
    const chunk = Buffer.from(audio);
    const events = this.vad.push(chunk);
    if (events.includes('speech_start') && this.utterance === null) {
      this.utterance = this.preroll;
      this.utteranceBytes = this.prerollBytes;
      this.preroll = [];
      this.prerollBytes = 0;
    }
    if (this.utterance !== null) {
      this.utterance.push(chunk);
      this.utteranceBytes += chunk.length;
      if (events.includes('speech_end') || this.utteranceBytes >= MAX_UTTERANCE_BYTES) {
        this.endUtterance();
        // Cut at the length limit while the caller is still talking: go on with a new one.
        if (this.vad.isSpeaking) this.utterance = [];
      }
      return;
    }
    this.preroll.push(chunk);
    this.prerollBytes += chunk.length;
    while (this.prerollBytes - (this.preroll[0]?.length ?? 0) >= PREROLL_BYTES) {
      this.prerollBytes -= this.preroll.shift()?.length ?? 0;
    }
  }

  onEvent(listener: (event: RecognitionEvent) => void): void {
    this.listeners.push(listener);
  }

  onError(listener: (error: Error) => void): void {
    this.errorListeners.push(listener);
  }

  /** Recognizes speech still in progress, waits for pending requests (each has a timeout). */
  async close(): Promise<void> {
    if (this.closed) return this.chain;
    if (this.utterance !== null) this.endUtterance();
    this.closed = true;
    await this.chain;
  }

  private endUtterance(): void {
    const audio = Buffer.concat(this.utterance ?? []);
    this.utterance = null;
    this.utteranceBytes = 0;
    this.chain = this.chain.then(() => this.recognize(audio));
  }

  private async recognize(mulaw: Uint8Array): Promise<void> {
    const url = new URL(this.options.endpoint);
    url.searchParams.set('language', this.options.language);
    url.searchParams.set('format', 'simple');
    const wav = encodeWav(upsample2x(mulawDecode(mulaw)), 16_000);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'Ocp-Apim-Subscription-Key': this.options.apiKey,
          'Content-Type': 'audio/wav; codecs=audio/pcm; samplerate=16000',
          Accept: 'application/json',
        },
        body: wav,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const body = await response.text();
      if (!response.ok) {
        throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
      }
      let result: SimpleResult;
      try {
        result = JSON.parse(body) as SimpleResult;
        if (result === null || typeof result !== 'object') throw new Error('not an object');
      } catch {
        throw new Error('unreadable response (not a JSON object)');
      }
      const status = result.RecognitionStatus;
      if (status === 'Success' && typeof result.DisplayText === 'string') {
        const text = result.DisplayText.trim();
        if (text.length > 0) this.emit({ kind: 'final', text });
      } else if (status !== 'NoMatch' && status !== 'InitialSilenceTimeout') {
        throw new Error(`recognition failed (RecognitionStatus ${String(status)})`);
      }
    } catch (error) {
      this.emitError(new Error(`azure ASR: ${fetchFailure(error)}`));
    }
  }

  private emit(event: RecognitionEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private emitError(error: Error): void {
    if (this.errorListeners.length === 0) this.logger.warn(error.message);
    for (const listener of this.errorListeners) listener(error);
  }
}
