import { randomUUID } from 'node:crypto';
import { type SpeechSynthesizer } from 'src/core';
import WebSocket, { type RawData } from 'ws';

export const CARTESIA_TTS_URL = 'wss://api.cartesia.ai/tts/websocket';

export interface CartesiaTtsOptions {
  readonly apiKey: string;
  readonly endpoint: string;
  readonly version: string;
  readonly model: string;
  readonly voiceId: string;
  readonly language: string;
  readonly timeoutMs: number;
}

interface CartesiaMessage {
  type?: unknown;
  context_id?: unknown;
  data?: unknown;
  done?: unknown;
  error?: unknown;
  message?: unknown;
  title?: unknown;
}

/**
 * Cartesia streaming TTS (`/tts/websocket`): one generation request per utterance
 * (`model_id`, `transcript`, `voice {mode: id}`, `output_format {container: raw, encoding:
 * pcm_mulaw, sample_rate: 8000}`, a fresh `context_id`, `continue: false`); `chunk` messages carry
 * base-64 µ-law audio, `done` ends the utterance, `error` fails it. Auth headers `X-API-Key`
 * (`CARTESIA_API_KEY`) and `Cartesia-Version`.
 */
export class CartesiaTts implements SpeechSynthesizer {
  constructor(private readonly options: CartesiaTtsOptions) {}

  static fromOptions(apiKey: string, options: Readonly<Record<string, unknown>>): CartesiaTts {
    return new CartesiaTts({
      apiKey,
      endpoint: typeof options.endpoint === 'string' ? options.endpoint : CARTESIA_TTS_URL,
      version: typeof options.version === 'string' ? options.version : '2024-06-10',
      model: typeof options.model === 'string' ? options.model : 'sonic-2',
      voiceId:
        typeof options.voice === 'string' ? options.voice : '248be419-c632-4f23-adf1-5324ed7dbf1d',
      language: typeof options.language === 'string' ? options.language : 'en',
      timeoutMs: typeof options.timeout === 'number' ? options.timeout * 1000 : 30_000,
    });
  }

  async *synthesize(text: string): AsyncIterable<Uint8Array> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (clean.length === 0) return;
    const contextId = randomUUID();
    const ws = new WebSocket(this.options.endpoint, {
      headers: { 'X-API-Key': this.options.apiKey, 'Cartesia-Version': this.options.version },
    });
    const chunks: Uint8Array[] = [];
    const state: { done: boolean; failure: Error | null } = { done: false, failure: null };
    let wake: (() => void) | null = null;
    const notify = (): void => {
      wake?.();
      wake = null;
    };
    const fail = (message: string): void => {
      state.failure ??= new Error(`cartesia TTS: ${message}`);
      notify();
    };
    const timer = setTimeout(
      () => fail(`timed out after ${this.options.timeoutMs} ms`),
      this.options.timeoutMs,
    );
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          model_id: this.options.model,
          transcript: clean,
          voice: { mode: 'id', id: this.options.voiceId },
          language: this.options.language,
          output_format: { container: 'raw', encoding: 'pcm_mulaw', sample_rate: 8000 },
          context_id: contextId,
          continue: false,
        }),
      );
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return fail('unexpected binary message');
      const raw = (Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer)).toString(
        'utf8',
      );
      let message: CartesiaMessage;
      try {
        message = JSON.parse(raw) as CartesiaMessage;
        if (message === null || typeof message !== 'object') throw new Error('not an object');
      } catch {
        return fail('unreadable message (not a JSON object)');
      }
      if (message.context_id !== undefined && message.context_id !== contextId) return;
      if (message.type === 'error') {
        const reason = [message.error, message.message, message.title].find(
          (v): v is string => typeof v === 'string',
        );
        return fail(reason ?? 'error');
      }
      if (message.type === 'chunk') {
        if (typeof message.data !== 'string') return fail('chunk without base-64 data');
        chunks.push(Buffer.from(message.data, 'base64'));
      }
      if (message.type === 'done' || message.done === true) state.done = true;
      notify();
    });
    ws.on('unexpected-response', (_req, res) => {
      fail(`refused the connection (HTTP ${res.statusCode})`);
      ws.terminate();
    });
    ws.on('error', (error) => fail(error.message));
    ws.on('close', () => {
      if (!state.done) fail('connection closed before the audio was complete');
    });
    try {
      for (;;) {
        while (chunks.length > 0) yield chunks.shift() as Uint8Array;
        if (state.failure !== null) throw state.failure;
        if (state.done) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearTimeout(timer);
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    }
  }
}
