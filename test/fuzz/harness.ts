import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { BIN, ROOT, freePort } from 'test/utils/cli';
import WebSocket from 'ws';

/** fast-check settings shared by every property: a fixed seed unless FUZZ_SEED says otherwise. */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20261127;
const RUN_FACTOR = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;
if (!Number.isFinite(FUZZ_SEED) || !Number.isFinite(RUN_FACTOR) || RUN_FACTOR <= 0) {
  throw new Error('FUZZ_SEED must be an integer and FUZZ_RUNS a positive number');
}

/** Cases actually run by every property so far (for the summary line). */
export const casesRun = { count: 0 };

/**
 * Parameters of one property: `baseRuns` cases, multiplied by FUZZ_RUNS; the first failure ends
 * the run (no shrinking, so the time stays bounded) unless FUZZ_SHRINK=1.
 */
export function fuzzParams(baseRuns: number): {
  seed: number;
  numRuns: number;
  endOnFailure: boolean;
  includeErrorInReport: boolean;
} {
  return {
    seed: FUZZ_SEED,
    numRuns: Math.max(1, Math.round(baseRuns * RUN_FACTOR)),
    endOnFailure: process.env.FUZZ_SHRINK !== '1',
    includeErrorInReport: true,
  };
}

/** A `parley run` server process of its own, so a crash (exit) is observable. */
export interface FuzzServer {
  readonly base: string;
  readonly port: number;
  readonly pid: number;
  /** Exit code or signal when the process has exited, else null. */
  exited(): string | null;
  output(): string;
  /** Resident set size of the server process in bytes (from /proc). */
  rss(): number;
  /**
   * A full, memory-reducing garbage collection in the server through its inspector (started
   * with `inspect`), then V8's heap in use and reserved: what a leak check compares, where a
   * plain RSS reading mostly shows how much garbage V8 has let pile up since its last collection.
   */
  collectGarbage(): Promise<{ heapUsed: number; heapTotal: number }>;
  stop(): Promise<void>;
}

/** One inspector (Chrome DevTools Protocol) call over a fresh WebSocket. */
async function inspectorCall(
  url: string,
  method: string,
): Promise<Record<string, unknown> | undefined> {
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${method}: no answer`)), 60_000);
      ws.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString()) as {
          id?: number;
          result?: Record<string, unknown>;
          error?: { message: string };
        };
        if (message.id !== 1) return;
        clearTimeout(timer);
        if (message.error) reject(new Error(`inspector ${method}: ${message.error.message}`));
        else resolve(message.result);
      });
      ws.send(JSON.stringify({ id: 1, method }));
    });
  } finally {
    ws.close();
  }
}

/**
 * Starts `node <flags> bin/parley.js run <args>` directly (the Node flags are given, so the
 * launcher does not start a second process: `pid` is the server itself). With `inspect`, the
 * server's inspector listens on a free loopback port, for `collectGarbage`.
 */
export async function startFuzzServer(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { inspect?: boolean } = {},
): Promise<FuzzServer> {
  const port = await freePort();
  const flags = ['--max-semi-space-size=32'];
  if (options.inspect) flags.push('--inspect=127.0.0.1:0');
  const child: ChildProcess = spawn(process.execPath, [...flags, BIN, 'run', ...args], {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: 'pipe',
  });
  let output = '';
  let inspectorUrl: string | undefined;
  const keep = (d: Buffer): void => {
    output += d.toString();
    inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
    if (output.length > 2_000_000) output = output.slice(-1_000_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exit: string | null = null;
  const exitedP = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = `exit code ${code} signal ${signal}`;
      resolve();
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  const server: FuzzServer = {
    base,
    port,
    pid: child.pid as number,
    exited: () => exit,
    output: () => output,
    rss: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status);
      return kb ? Number(kb[1]) * 1024 : 0;
    },
    collectGarbage: async () => {
      const url = inspectorUrl;
      if (url === undefined) throw new Error('the server was started without its inspector');
      await inspectorCall(url, 'HeapProfiler.collectGarbage');
      const usage = await inspectorCall(url, 'Runtime.getHeapUsage');
      return { heapUsed: Number(usage?.usedSize), heapTotal: Number(usage?.totalSize) };
    },
    stop: async () => {
      if (exit === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exitedP;
      clearTimeout(timer);
    },
  };
  for (let i = 0; i < 160 && exit === null; i++) {
    const ready = await fetch(`${base}/health/ready`).catch(() => null);
    if (ready?.status === 200) return server;
    await new Promise((r) => setTimeout(r, 250));
  }
  await server.stop();
  throw new Error(`parley run did not become ready:\n${output.slice(-5000)}`);
}

/** One raw HTTP exchange: what the server answered, or why there was no answer. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Milliseconds from the request written to the answer read (kept-alive exchanges only). */
  readonly ms?: number;
}

export class NoAnswer extends Error {}

/**
 * Sends `head` + `body` as they are over a fresh TCP connection (any bytes: NUL, invalid UTF-8,
 * broken percent-escapes) and reads the answer until the server closes the connection
 * (`Connection: close` is sent). Rejects with NoAnswer after `timeoutMs` ("hang") or when the
 * connection ends without a status line.
 */
export function rawRequest(
  port: number,
  head: Buffer,
  body: Buffer,
  timeoutMs: number,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (error: Error | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) {
        reject(error);
        return;
      }
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (e) {
        reject(e instanceof Error ? e : new NoAnswer(String(e)));
      }
    };
    const timer = setTimeout(
      () => finish(new NoAnswer(`no complete answer within ${timeoutMs} ms (hang)`)),
      timeoutMs,
    );
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      // A complete answer with a known length ends the exchange without waiting for the close.
      const all = Buffer.concat(chunks);
      if (complete(all)) finish(null);
    });
    socket.on('end', () => finish(null));
    // The server may close while the body is still being written (e.g. after a 413): what it
    // answered before counts.
    socket.on('error', () => finish(null));
    socket.write(Buffer.concat([head, body]));
  });
}

function headEnd(buf: Buffer): number {
  return buf.indexOf('\r\n\r\n');
}

function complete(buf: Buffer): boolean {
  const end = headEnd(buf);
  if (end < 0) return false;
  const head = buf.subarray(0, end).toString('latin1');
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) return buf.length - (end + 4) >= Number(length[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    return (
      buf.subarray(end + 4).includes('\r\n0\r\n\r\n') ||
      buf.subarray(end + 4).indexOf('0\r\n\r\n') === 0
    );
  }
  // HEAD answers and 204/304 carry no body.
  return /^HTTP\/1\.[01] (204|304)/.test(head);
}

function parseResponse(buf: Buffer): RawResponse {
  const end = headEnd(buf);
  if (end < 0) {
    throw new NoAnswer(
      buf.length === 0
        ? 'connection closed without an answer'
        : `incomplete answer: ${JSON.stringify(buf.subarray(0, 200).toString('latin1'))}`,
    );
  }
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!statusLine) throw new NoAnswer(`not an HTTP answer: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = buf.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status: Number(statusLine[1]), headers, body };
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface PendingExchange {
  readonly data: Buffer;
  readonly method: string;
  readonly resolve: (r: RawResponse) => void;
  readonly reject: (e: Error) => void;
  retried?: boolean;
}

/**
 * Persistent HTTP/1.1 connections to the server, `size` of them, each carrying one exchange at a
 * time (requests beyond that wait for a free connection). A connection is used again while the
 * server keeps it open (no `Connection: close`, a delimited body); a connection the server ends
 * is replaced. The bytes of a request are sent as they are, like `rawRequest` does.
 */
export class KeepAliveClient {
  private readonly idle: KeepAliveConnection[] = [];
  private readonly queue: PendingExchange[] = [];
  private open = 0;
  /** Connections opened so far (one per exchange would mean keep-alive does not hold). */
  connections = 0;

  constructor(
    private readonly port: number,
    private readonly size: number,
    private readonly timeoutMs: number,
  ) {}

  /** Sends `head` + `body` (a request to `method`) and resolves with the answer; NoAnswer otherwise. */
  send(head: Buffer, body: Buffer, method: string): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      this.queue.push({ data: Buffer.concat([head, body]), method, resolve, reject });
      this.pump();
    });
  }

  close(): void {
    for (const c of this.idle.splice(0)) c.destroy();
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let connection = this.idle.pop();
      if (connection?.isClosed()) {
        this.open--;
        continue;
      }
      if (connection === undefined) {
        if (this.open >= this.size) return;
        this.open++;
        this.connections++;
        connection = new KeepAliveConnection(this.port, this.timeoutMs);
      }
      const job = this.queue.shift() as PendingExchange;
      const used = connection;
      used.exchange(job.data, job.method).then(
        (answer) => {
          if (used.reusable) this.idle.push(used);
          else {
            used.destroy();
            this.open--;
          }
          job.resolve(answer);
          this.pump();
        },
        (error: Error) => {
          used.destroy();
          this.open--;
          if (error instanceof StaleConnection && job.retried !== true) {
            job.retried = true;
            this.queue.unshift(job);
          } else job.reject(error);
          this.pump();
        },
      );
    }
  }
}

/** One persistent connection of a KeepAliveClient. */
class KeepAliveConnection {
  private readonly socket;
  private buffer: Buffer = Buffer.alloc(0);
  private closed = false;
  private current: {
    method: string;
    resolve: (r: RawResponse) => void;
    reject: (e: Error) => void;
    timer: NodeJS.Timeout;
    sent: number;
  } | null = null;
  /** True once an exchange has ended with the connection still usable. */
  reusable = false;
  private served = 0;

  constructor(
    port: number,
    private readonly timeoutMs: number,
  ) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.on('data', (d: Buffer) => {
      this.buffer = this.buffer.length === 0 ? d : Buffer.concat([this.buffer, d]);
      this.tryFinish(false);
    });
    const ended = (): void => {
      this.closed = true;
      this.tryFinish(true);
    };
    this.socket.on('end', ended);
    this.socket.on('close', ended);
    // The server may close while a body is still being written (e.g. after a 413): what it
    // answered before counts, so an error is handled like the end of the connection.
    this.socket.on('error', ended);
  }

  exchange(data: Buffer, method: string): Promise<RawResponse> {
    this.reusable = false;
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new StaleConnection('connection closed before the request was sent'));
        return;
      }
      const timer = setTimeout(() => {
        this.finish(new NoAnswer(`no complete answer within ${this.timeoutMs} ms (hang)`));
      }, this.timeoutMs);
      this.current = { method, resolve, reject, timer, sent: performance.now() };
      this.socket.write(data);
    });
  }

  isClosed(): boolean {
    return this.closed;
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private tryFinish(atEnd: boolean): void {
    if (this.current === null) return;
    const length = messageLength(this.buffer, this.current.method === 'HEAD');
    if (length !== null) {
      const message = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      let answer: RawResponse;
      try {
        answer = parseResponse(message);
      } catch (e) {
        this.finish(e as Error);
        return;
      }
      const close = /\bclose\b/i.test(answer.headers.connection ?? '');
      this.reusable = !close && !this.closed && this.buffer.length === 0;
      this.served++;
      this.finish(null, answer);
      return;
    }
    if (!atEnd) return;
    if (this.buffer.length === 0 && this.served > 0) {
      // The server closed an idle kept-alive connection as the request went out: not an answer
      // to this request, which is sent again on a fresh connection by the caller's retry.
      this.finish(new StaleConnection('kept-alive connection closed by the server'));
      return;
    }
    try {
      this.finish(null, parseResponse(this.buffer));
    } catch (e) {
      this.finish(e as Error);
    }
  }

  private finish(error: Error | null, answer?: RawResponse): void {
    const current = this.current;
    if (current === null) return;
    this.current = null;
    clearTimeout(current.timer);
    if (error) current.reject(error);
    else current.resolve({ ...(answer as RawResponse), ms: performance.now() - current.sent });
  }
}

/** A request lost on a connection the server closed while idle (to be sent again). */
export class StaleConnection extends NoAnswer {}

/**
 * The byte length of the first complete HTTP answer in `buf`, or null while it is incomplete or
 * delimited only by the end of the connection.
 */
function messageLength(buf: Buffer, head: boolean): number | null {
  const end = headEnd(buf);
  if (end < 0) return null;
  const text = buf.subarray(0, end).toString('latin1');
  const bodyStart = end + 4;
  if (head || /^HTTP\/1\.[01] (1\d\d|204|304)/.test(text)) return bodyStart;
  if (/\r\ntransfer-encoding:\s*chunked/i.test(text)) {
    let at = bodyStart;
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return null;
      const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
      if (!Number.isFinite(size)) return null;
      if (size === 0) {
        const trailerEnd = buf.indexOf('\r\n', eol + 2);
        return trailerEnd < 0 ? null : trailerEnd + 2;
      }
      at = eol + 2 + size + 2;
      if (at > buf.length) return null;
    }
  }
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
  if (length) {
    const total = bodyStart + Number(length[1]);
    return buf.length >= total ? total : null;
  }
  return null;
}
