import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/**
 * A Genesys Audio Connector client written from the AudioHook protocol, for tests and benches:
 * signs the upgrade request, speaks the text protocol with its own seq/serverseq, streams caller
 * audio, and plays back bot audio (answering `playback_started` / `playback_completed`).
 */
export interface AudioHookClientOptions {
  url: string;
  apiKey?: string;
  /** Base-64 client secret: sign the request. */
  clientSecret?: string;
  sessionId?: string;
  organizationId?: string;
  correlationId?: string;
  /** Override or drop (`undefined` value) headers. */
  headers?: Record<string, string | undefined>;
  /** Signature tweaks for negative tests. */
  signature?: { created?: number; expires?: number; nonce?: string };
  /** Simulated playback: `playback_completed` this long after the last bot audio arrived. */
  playbackMs?: number;
}

export interface ServerMessage {
  version: string;
  id: string;
  type: string;
  seq: number;
  clientseq: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test client reads arbitrary server parameters
  parameters: Record<string, any>;
}

export function signHeaders(
  url: URL,
  headers: Record<string, string>,
  apiKey: string,
  secret: string,
  opts: { created?: number; expires?: number; nonce?: string } = {},
): { signature: string; 'signature-input': string } {
  const components = [
    '@request-target',
    '@authority',
    'audiohook-organization-id',
    'audiohook-session-id',
    'audiohook-correlation-id',
    'x-api-key',
  ];
  const created = opts.created ?? Math.floor(Date.now() / 1000);
  const expires = opts.expires ?? created + 30;
  const nonce = opts.nonce ?? randomBytes(18).toString('base64');
  const params = `(${components.map((c) => `"${c}"`).join(' ')});keyid="${apiKey}";nonce="${nonce}";alg="hmac-sha256";created=${created};expires=${expires}`;
  const value = (c: string): string =>
    c === '@request-target'
      ? url.pathname + url.search
      : c === '@authority'
        ? url.host
        : (headers[c] ?? '');
  const base = [
    ...components.map((c) => `"${c}": ${value(c)}`),
    `"@signature-params": ${params}`,
  ].join('\n');
  const mac = createHmac('sha256', Buffer.from(secret, 'base64')).update(base).digest('base64');
  return { signature: `sig1=:${mac}:`, 'signature-input': `sig1=${params}` };
}

export class AudioHookClient {
  readonly sessionId: string;
  readonly organizationId: string;
  readonly messages: ServerMessage[] = [];
  /** Bot audio messages as received, with their arrival time (ms). */
  readonly audio: Array<{ data: Buffer; at: number }> = [];
  private seq = 0;
  private serverSeq = 0;
  private waiters: Array<() => void> = [];
  private playbackTimer: NodeJS.Timeout | null = null;
  private playing = false;
  closeCode: number | null = null;
  /** Protocol errors seen by the client (wrong server seq, ...). */
  readonly violations: string[] = [];
  autoPlayback = true;

  private constructor(
    readonly ws: WebSocket,
    ids: { sessionId: string; organizationId: string },
    private readonly playbackMs: number,
  ) {
    this.sessionId = ids.sessionId;
    this.organizationId = ids.organizationId;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.onAudio(data);
      else this.onText(data.toString('utf8'));
      this.notify();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      if (this.playbackTimer) clearTimeout(this.playbackTimer);
      this.notify();
    });
  }

  /** Connects; rejects with the HTTP status (e.g. `401`) when the upgrade is refused. */
  static connect(options: AudioHookClientOptions): Promise<AudioHookClient> {
    const url = new URL(options.url);
    const sessionId = options.sessionId ?? randomUUID();
    const organizationId = options.organizationId ?? randomUUID();
    const base: Record<string, string> = {
      'audiohook-organization-id': organizationId,
      'audiohook-session-id': sessionId,
      'audiohook-correlation-id': options.correlationId ?? randomUUID(),
      'x-api-key': options.apiKey ?? '',
    };
    let headers: Record<string, string | undefined> = { ...base };
    if (options.clientSecret !== undefined) {
      headers = {
        ...headers,
        ...signHeaders(url, base, options.apiKey ?? '', options.clientSecret, options.signature),
      };
    }
    headers = { ...headers, ...(options.headers ?? {}) };
    const clean = Object.fromEntries(
      Object.entries(headers).filter(([, v]) => v !== undefined),
    ) as Record<string, string>;
    const ws = new WebSocket(url, { headers: clean });
    return new Promise((resolve, reject) => {
      ws.once('open', () =>
        resolve(new AudioHookClient(ws, { sessionId, organizationId }, options.playbackMs ?? 50)),
      );
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          reject(
            Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body }),
          ),
        );
      });
      ws.once('error', reject);
    });
  }

  /** Sends a protocol message with the next seq (or raw overrides for negative tests). */
  send(
    type: string,
    parameters: Record<string, unknown> = {},
    overrides: Record<string, unknown> = {},
  ): void {
    this.seq += 1;
    this.ws.send(
      JSON.stringify({
        version: '2',
        id: this.sessionId,
        type,
        seq: this.seq,
        serverseq: this.serverSeq,
        position: 'PT0S',
        parameters,
        ...overrides,
      }),
    );
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  open(parameters: Record<string, unknown> = {}): void {
    this.send('open', {
      organizationId: this.organizationId,
      conversationId: randomUUID(),
      participant: {
        id: randomUUID(),
        ani: 'tel:+14155550100',
        aniName: 'Ann',
        dnis: 'tel:+18005550199',
      },
      media: [{ type: 'audio', format: 'PCMU', channels: ['external'], rate: 8000 }],
      language: 'en-US',
      ...parameters,
    });
  }

  /** Streams caller audio in 200 ms frames (1,600 bytes), `paceMs` apart. */
  async stream(audio: Uint8Array, paceMs = 0, frameBytes = 1600): Promise<void> {
    for (let offset = 0; offset < audio.length; offset += frameBytes) {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      this.ws.send(audio.subarray(offset, Math.min(audio.length, offset + frameBytes)), {
        binary: true,
      });
      if (paceMs > 0) await new Promise((r) => setTimeout(r, paceMs));
    }
  }

  /** Waits until `predicate` holds (checked after every received frame). */
  async waitFor<T>(
    predicate: () => T | undefined | null | false,
    timeoutMs = 15_000,
    what = 'condition',
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = predicate();
      if (value) return value;
      if (Date.now() > deadline) {
        throw new Error(
          `timed out waiting for ${what}; got ${this.messages.map((m) => m.type).join(',')}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  waitForType(type: string, timeoutMs?: number): Promise<ServerMessage> {
    return this.waitFor(() => this.messages.find((m) => m.type === type), timeoutMs, `"${type}"`);
  }

  waitForClose(timeoutMs?: number): Promise<number> {
    return this.waitFor(() => this.closeCode, timeoutMs, 'socket close');
  }

  close(): void {
    this.ws.close();
  }

  private onText(text: string): void {
    const message = JSON.parse(text) as ServerMessage;
    if (message.seq !== this.serverSeq + 1) {
      this.violations.push(`server seq ${message.seq} after ${this.serverSeq}`);
    }
    if (message.id !== this.sessionId) this.violations.push(`server id ${message.id}`);
    if (message.version !== '2') this.violations.push(`server version ${message.version}`);
    if (message.clientseq > this.seq) {
      this.violations.push(`clientseq ${message.clientseq} > ${this.seq}`);
    }
    this.serverSeq = message.seq;
    this.messages.push(message);
    if (message.type === 'disconnect') this.send('close', { reason: 'disconnect' });
  }

  private onAudio(data: Buffer): void {
    this.audio.push({ data, at: Date.now() });
    if (!this.autoPlayback) return;
    if (!this.playing) {
      this.playing = true;
      this.send('playback_started');
    }
    if (this.playbackTimer) clearTimeout(this.playbackTimer);
    this.playbackTimer = setTimeout(() => {
      this.playing = false;
      if (this.ws.readyState === WebSocket.OPEN) this.send('playback_completed');
    }, this.playbackMs);
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
