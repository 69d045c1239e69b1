import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

/** A call a FakePlatform received. */
export interface PlatformCall {
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: IncomingHttpHeaders;
  /** The JSON body, a form-encoded body's fields, or the text when it is neither. */
  readonly body: unknown;
  /** The body as received. */
  readonly raw: string;
}

/** What the fake answers one call with. */
export interface PlatformReply {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

/**
 * A stand-in for a messaging platform's HTTP API (Slack Web API, Telegram Bot API, Graph API …):
 * a real HTTP server on loopback that records every call and answers it with `reply(call)`,
 * unless a one-off answer is queued for its path with `once` (a 429 with Retry-After, say).
 */
export interface FakePlatform {
  readonly url: string;
  readonly calls: PlatformCall[];
  reply: (call: PlatformCall) => PlatformReply;
  /** Answers the next call to `path` with `reply` instead of the usual answer. */
  once(path: string, reply: PlatformReply): void;
  /** The calls to paths ending in `suffix`, oldest first. */
  callsTo(suffix: string): PlatformCall[];
  close(): Promise<void>;
}

export async function startFakePlatform(
  reply: (call: PlatformCall) => PlatformReply,
): Promise<FakePlatform> {
  const calls: PlatformCall[] = [];
  const queued = new Map<string, PlatformReply[]>();
  const state = { reply };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      if (/^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) {
        body = Object.fromEntries(new URLSearchParams(text));
      } else {
        try {
          body = JSON.parse(text);
        } catch {
          // keep the text
        }
      }
      const url = new URL(req.url ?? '/', 'http://fake');
      const call: PlatformCall = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        raw: text,
      };
      calls.push(call);
      const answer = queued.get(call.path)?.shift() ?? state.reply(call);
      res.statusCode = answer.status ?? 200;
      for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    get reply() {
      return state.reply;
    },
    set reply(value) {
      state.reply = value;
    },
    once(path, answer) {
      queued.set(path, [...(queued.get(path) ?? []), answer]);
    },
    callsTo: (suffix) => calls.filter((c) => c.path.endsWith(suffix)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
