import { Logger } from '@nestjs/common';
import { type RecognitionEvent, type SpeechRecognizer } from 'src/core';
import WebSocket, { type RawData } from 'ws';

export const DEEPGRAM_LISTEN_URL = 'wss://api.deepgram.com/v1/listen';

/** Caller audio kept while the connection opens (10 s of µ-law 8 kHz); older audio is dropped. */
const MAX_PENDING_BYTES = 80_000;

export interface DeepgramAsrOptions {
  readonly apiKey: string;
  readonly endpoint: string;
  readonly model: string;
  readonly language: string;
  /** Milliseconds of silence that end speech (`endpointing`). */
  readonly endpointingMs: number;
  /** `utterance_end_ms`; 0 = not asked for. */
  readonly utteranceEndMs: number;
  readonly smartFormat: boolean;
  /** Interval of `KeepAlive` messages. */
  readonly keepAliveMs: number;
  /** How long `close()` waits for the final results after `CloseStream`. */
  readonly closeTimeoutMs: number;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

interface ResultsMessage {
  type: 'Results';
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number }> };
}

/**
 * Deepgram streaming ASR (`/v1/listen` WebSocket), one connection per call. Caller audio goes
 * out as binary frames (µ-law 8 kHz mono: `encoding=mulaw&sample_rate=8000`); `Results` messages
 * come back: non-final text → interim event; final text is accumulated and sent as one final
 * event on `speech_final` or `UtteranceEnd`. `KeepAlive` keeps the socket open in silences,
 * `CloseStream` ends it. Auth: `Authorization: Token <DEEPGRAM_API_KEY>`.
 */
export class DeepgramAsr implements SpeechRecognizer {
  private readonly logger = new Logger(DeepgramAsr.name);
  private readonly ws: WebSocket;
  private readonly listeners: Array<(event: RecognitionEvent) => void> = [];
  private readonly errorListeners: Array<(error: Error) => void> = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private accumulated: string[] = [];
  private confidence: number | null = null;
  private failed = false;
  private closing = false;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly closed: Promise<void>;

  constructor(private readonly options: DeepgramAsrOptions) {
    const url = new URL(options.endpoint);
    const query: Record<string, string> = {
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      model: options.model,
      language: options.language,
      interim_results: 'true',
      endpointing: String(options.endpointingMs),
      vad_events: 'true',
      smart_format: String(options.smartFormat),
    };
    if (options.utteranceEndMs > 0) query.utterance_end_ms = String(options.utteranceEndMs);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    this.ws = new WebSocket(url, { headers: { Authorization: `Token ${options.apiKey}` } });
    this.closed = new Promise((resolve) => this.ws.once('close', () => resolve()));
    this.ws.on('open', () => {
      for (const chunk of this.pending) this.ws.send(chunk, { binary: true });
      this.pending = [];
      this.pendingBytes = 0;
      if (this.closing) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
    });
    this.ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    this.ws.on('unexpected-response', (_req, res) => {
      this.fail(new Error(`deepgram ASR refused the connection (HTTP ${res.statusCode})`));
      this.ws.terminate();
    });
    this.ws.on('error', (error) => this.fail(new Error(`deepgram ASR: ${error.message}`)));
    this.ws.on('close', (code, reason) => {
      clearInterval(this.keepAlive);
      this.flush();
      if (!this.closing && !this.failed) {
        const why = reason.length > 0 ? `: ${reason.toString('utf8')}` : '';
        this.fail(new Error(`deepgram ASR closed the connection (${code}${why})`));
      }
    });
    this.keepAlive = setInterval(() => {
      if (this.ws.readyState === WebSocket.OPEN) {
        this.ws.send(JSON.stringify({ type: 'KeepAlive' }));
      }
    }, options.keepAliveMs);
    this.keepAlive.unref();
  }

  static fromOptions(apiKey: string, options: Readonly<Record<string, unknown>>): DeepgramAsr {
    return new DeepgramAsr({
      apiKey,
      endpoint: typeof options.endpoint === 'string' ? options.endpoint : DEEPGRAM_LISTEN_URL,
      model: typeof options.model === 'string' ? options.model : 'nova-2-general',
      language: typeof options.language === 'string' ? options.language : 'en',
      endpointingMs: num(options.endpointing, 400),
      utteranceEndMs: num(options.utterance_end_ms, 1000),
      smartFormat: options.smart_format !== false,
      keepAliveMs: num(options.keep_alive_interval, 5) * 1000,
      closeTimeoutMs: 2000,
    });
  }

  sendAudio(audio: Uint8Array): void {
    if (this.failed || this.closing) return;
    const chunk = Buffer.from(audio);
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(chunk, { binary: true });
      return;
    }
    if (this.ws.readyState !== WebSocket.CONNECTING) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes > MAX_PENDING_BYTES) {
      this.pendingBytes -= this.pending.shift()?.length ?? 0;
    }
  }

  onEvent(listener: (event: RecognitionEvent) => void): void {
    this.listeners.push(listener);
  }

  onError(listener: (error: Error) => void): void {
    this.errorListeners.push(listener);
  }

  /** Sends `CloseStream` and waits (bounded) for the last results and the server's close. */
  async close(): Promise<void> {
    if (this.closing) return this.closed;
    this.closing = true;
    clearInterval(this.keepAlive);
    if (this.ws.readyState === WebSocket.CLOSED) return;
    if (this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: 'CloseStream' }));
    }
    const timer = setTimeout(() => this.ws.terminate(), this.options.closeTimeoutMs);
    await this.closed;
    clearTimeout(timer);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.emitError(new Error('deepgram ASR: unexpected binary message'));
      return;
    }
    let message: { type?: unknown };
    try {
      message = JSON.parse(toBuffer(data).toString('utf8')) as { type?: unknown };
      if (message === null || typeof message !== 'object') throw new Error('not an object');
    } catch {
      this.emitError(new Error('deepgram ASR: unreadable message (not a JSON object)'));
      return;
    }
    if (message.type === 'Results') this.onResults(message as ResultsMessage);
    else if (message.type === 'UtteranceEnd') this.flush();
    else if (message.type === 'Error') {
      const m = message as { description?: unknown; message?: unknown };
      const reason = [m.description, m.message].find((v): v is string => typeof v === 'string');
      this.emitError(new Error(`deepgram ASR: ${reason ?? 'error'}`));
    }
    // Metadata, SpeechStarted: nothing to do.
  }

  private onResults(message: ResultsMessage): void {
    const alternatives = message.channel?.alternatives;
    const transcript = Array.isArray(alternatives) ? alternatives[0]?.transcript : undefined;
    if (typeof transcript !== 'string') {
      this.emitError(new Error('deepgram ASR: Results message without a transcript'));
      return;
    }
    const text = transcript.trim();
    if (message.is_final === true) {
      if (text.length > 0) this.accumulated.push(text);
      const confidence = alternatives?.[0]?.confidence;
      if (text.length > 0 && typeof confidence === 'number') {
        this.confidence = Math.min(this.confidence ?? 1, confidence);
      }
      if (message.speech_final === true) this.flush();
      else if (text.length > 0) this.emit({ kind: 'interim', text: this.accumulated.join(' ') });
    } else if (text.length > 0) {
      this.emit({ kind: 'interim', text: [...this.accumulated, text].join(' ') });
    }
  }

  private flush(): void {
    if (this.accumulated.length === 0) return;
    const text = this.accumulated.join(' ');
    const confidence = this.confidence;
    this.accumulated = [];
    this.confidence = null;
    // the lowest confidence of the parts: one doubtful part makes the utterance doubtful
    this.emit({ kind: 'final', text, ...(confidence !== null ? { confidence } : {}) });
  }

  private emit(event: RecognitionEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** A connection failure: reported once, recognition stops for the call. */
  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    clearInterval(this.keepAlive);
    this.pending = [];
    this.emitError(error);
  }

  private emitError(error: Error): void {
    if (this.errorListeners.length === 0) this.logger.warn(error.message);
    for (const listener of this.errorListeners) listener(error);
  }
}
