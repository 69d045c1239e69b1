import { WebSocket } from 'ws';

/** How a socket ended: the close code and reason Parley sent. */
export interface Closed {
  readonly code: number;
  readonly reason: string;
}

/**
 * A stand-in for a jambonz feature server talking to a bot over jambonz's WebSocket API (from
 * jambonz's public docs, "WebSocket API"): it connects with the `ws.jambonz.org` subprotocol,
 * sends the documented messages (`session:new`, `verb:hook`, `call:status`) and reads what the
 * bot answers (`ack` with verbs).
 */
export class FakeJambonzCall {
  private readonly received: unknown[] = [];
  private readonly waiting: ((message: unknown) => void)[] = [];
  readonly closed: Promise<Closed>;
  private n = 0;

  private constructor(
    readonly ws: WebSocket,
    readonly callSid: string,
  ) {
    ws.on('message', (data: Buffer) => {
      const message: unknown = JSON.parse(data.toString('utf8'));
      const waiter = this.waiting.shift();
      if (waiter) waiter(message);
      else this.received.push(message);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code: number, reason: Buffer) =>
        resolve({ code, reason: reason.toString('utf8') }),
      ),
    );
  }

  /** Opens the socket; rejects with the HTTP status when the upgrade is refused. */
  static connect(
    url: string,
    callSid: string,
    headers: Record<string, string> = {},
  ): Promise<FakeJambonzCall> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, 'ws.jambonz.org', { headers });
      const call = new FakeJambonzCall(ws, callSid);
      ws.once('open', () => resolve(call));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  /** The next message the bot sends. */
  next(): Promise<unknown> {
    if (this.received.length > 0) return Promise.resolve(this.received.shift());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  send(message: unknown): string {
    const msgid = `msg${++this.n}-${this.callSid}`;
    this.ws.send(JSON.stringify({ msgid, call_sid: this.callSid, ...(message as object) }));
    return msgid;
  }

  /** `session:new`: a new inbound call (the docs' example, trimmed). */
  sessionNew(from = '+15083084809', to = '+15083728299'): string {
    return this.send({
      type: 'session:new',
      data: {
        sip: { headers: { 'user-agent': 'Twilio Gateway' } },
        direction: 'inbound',
        caller_name: 'Ann',
        call_sid: this.callSid,
        account_sid: '4bfe85c1-96bb-4af7-ac83-68fe7ebd562d',
        from,
        to,
        call_id: 'd8907723-0bc7-123b-09b5-12e962f3039b',
        sip_status: 100,
        call_status: 'trying',
      },
    });
  }

  /** `verb:hook` of the gather's actionHook with a final transcript (the docs' example shape). */
  speech(transcript: string): string {
    return this.send({
      type: 'verb:hook',
      hook: '/gather',
      data: {
        speech: {
          language_code: 'en-US',
          channel_tag: 1,
          is_final: true,
          alternatives: [{ confidence: 0.91916794, transcript }],
        },
        reason: 'speechDetected',
        call_sid: this.callSid,
        direction: 'inbound',
        call_status: 'in-progress',
      },
    });
  }

  gatherHook(data: Record<string, unknown>): string {
    return this.send({
      type: 'verb:hook',
      hook: '/gather',
      data: { call_sid: this.callSid, ...data },
    });
  }

  /** `call:status`: the call ended. */
  completed(): void {
    this.send({
      type: 'call:status',
      data: { call_sid: this.callSid, call_status: 'completed', sip_status: 200, duration: 12 },
    });
  }

  close(): void {
    this.ws.close();
  }
}
