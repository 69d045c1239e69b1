import { type SpeechSynthesizer } from 'src/core';
import WebSocket, { type RawData } from 'ws';

export const DEEPGRAM_SPEAK_URL = 'wss://api.deepgram.com/v1/speak';

export interface DeepgramTtsOptions {
  readonly apiKey: string;
  readonly endpoint: string;
  readonly model: string;
  readonly timeoutMs: number;
}

/**
 * Deepgram streaming TTS (`/v1/speak` WebSocket): `Speak` with the text, then `Flush`; binary
 * frames are µ-law 8 kHz audio (asked for with `encoding=mulaw&sample_rate=8000`), `Flushed` ends
 * the utterance. One connection per utterance; the API key goes in `Authorization: Token …`.
 */
export class DeepgramTts implements SpeechSynthesizer {
  constructor(private readonly options: DeepgramTtsOptions) {}

  static fromOptions(apiKey: string, options: Readonly<Record<string, unknown>>): DeepgramTts {
    return new DeepgramTts({
      apiKey,
      endpoint: typeof options.endpoint === 'string' ? options.endpoint : DEEPGRAM_SPEAK_URL,
      model: typeof options.model === 'string' ? options.model : 'aura-2-andromeda-en',
      timeoutMs: typeof options.timeout === 'number' ? options.timeout * 1000 : 30_000,
    });
  }

  async *synthesize(text: string): AsyncIterable<Uint8Array> {
    const url = new URL(this.options.endpoint);
    url.searchParams.set('model', this.options.model);
    url.searchParams.set('encoding', 'mulaw');
    url.searchParams.set('sample_rate', '8000');
    url.searchParams.set('container', 'none');
    const ws = new WebSocket(url, { headers: { Authorization: `Token ${this.options.apiKey}` } });
    const chunks: Uint8Array[] = [];
    let done = false;
    const state: { failure: Error | null } = { failure: null };
    let wake: (() => void) | null = null;
    const notify = (): void => {
      wake?.();
      wake = null;
    };
    const timer = setTimeout(() => {
      state.failure = new Error(`deepgram TTS timed out after ${this.options.timeoutMs} ms`);
      notify();
    }, this.options.timeoutMs);
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'Speak', text }));
      ws.send(JSON.stringify({ type: 'Flush' }));
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = Buffer.isBuffer(data)
        ? data
        : Array.isArray(data)
          ? Buffer.concat(data)
          : Buffer.from(data);
      if (isBinary) chunks.push(bytes);
      else {
        try {
          const message = JSON.parse(bytes.toString('utf8')) as {
            type?: string;
            description?: string;
          };
          if (message.type === 'Flushed') done = true;
          if (message.type === 'Error') {
            state.failure = new Error(`deepgram TTS: ${message.description ?? 'error'}`);
          }
        } catch {
          state.failure = new Error('deepgram TTS: unreadable message');
        }
      }
      notify();
    });
    ws.on('unexpected-response', (_req, res) => {
      state.failure = new Error(`deepgram TTS refused the connection (HTTP ${res.statusCode})`);
      notify();
    });
    ws.on('error', (error) => {
      state.failure ??= new Error(`deepgram TTS: ${error.message}`);
      notify();
    });
    ws.on('close', () => {
      done = true;
      notify();
    });
    try {
      for (;;) {
        while (chunks.length > 0) yield chunks.shift() as Uint8Array;
        if (state.failure !== null) throw state.failure;
        if (done) return;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      clearTimeout(timer);
      if (ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ type: 'Close' }));
        ws.close();
      } else if (ws.readyState === WebSocket.CONNECTING) {
        ws.terminate();
      }
    }
  }
}
