import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

/**
 * A local stand-in for an OpenAI-compatible API, for tests: `POST /v1/chat/completions` and
 * `POST /v1/embeddings` in the shapes of OpenAI's public API reference, answers scripted by the
 * test, every request recorded. Listens on 127.0.0.1 only.
 */

export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Record<string, unknown>;
}

export interface FakeLlmOptions {
  /** The assistant's answer to a chat-completions request (default: an empty answer). */
  readonly chat?: (messages: readonly ChatMessage[], body: Record<string, unknown>) => string;
  /** The vector for one embeddings input (default: a bag of letters, 26 dimensions). */
  readonly embed?: (input: string) => number[];
  /** Milliseconds to wait before answering. */
  readonly delayMs?: number;
  /** Answer every request with this HTTP status and an OpenAI-style error body. */
  readonly failWithStatus?: number;
  /** Only accept requests carrying `Authorization: Bearer <key>` (else 401). */
  readonly requireKey?: string;
}

export interface FakeLlmServer {
  /** The API base to configure (`http://127.0.0.1:<port>/v1`). */
  readonly apiBase: string;
  readonly requests: RecordedRequest[];
  /** The prompts (content of the messages) of every chat-completions request, in order. */
  prompts(): string[];
  /** Changes the behaviour for the following requests. */
  configure(options: FakeLlmOptions): void;
  close(): Promise<void>;
}

/** A deterministic embedding: letter frequencies of the text. */
export function letterEmbedding(text: string): number[] {
  const v = new Array<number>(26).fill(0);
  for (const ch of text.toLowerCase()) {
    const i = ch.charCodeAt(0) - 97;
    if (i >= 0 && i < 26) v[i] = (v[i] as number) + 1;
  }
  return v;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

export async function startFakeLlmServer(initial: FakeLlmOptions = {}): Promise<FakeLlmServer> {
  let options = initial;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req).catch((): Record<string, unknown> => ({}));
      const path = (req.url ?? '').split('?')[0] ?? '';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs).unref());
      const send = (status: number, payload: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      const error = (status: number, message: string, type: string) =>
        send(status, { error: { message, type, param: null, code: null } });
      if (options.requireKey && req.headers.authorization !== `Bearer ${options.requireKey}`) {
        error(401, 'Incorrect API key provided.', 'invalid_request_error');
        return;
      }
      if (options.failWithStatus) {
        error(options.failWithStatus, 'The server had an error.', 'server_error');
        return;
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        const messages = (body.messages ?? []) as ChatMessage[];
        const content = options.chat ? options.chat(messages, body) : '';
        send(200, {
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? 'fake',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content },
              finish_reason: 'stop',
              logprobs: null,
            },
          ],
          usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        });
        return;
      }
      if (req.method === 'POST' && path === '/v1/embeddings') {
        const raw = body.input;
        const inputs = Array.isArray(raw) ? raw.map(String) : [typeof raw === 'string' ? raw : ''];
        const embed = options.embed ?? letterEmbedding;
        send(200, {
          object: 'list',
          data: inputs.map((input, index) => ({
            object: 'embedding',
            index,
            embedding: embed(input),
          })),
          model: body.model ?? 'fake-embeddings',
          usage: { prompt_tokens: 0, total_tokens: 0 },
        });
        return;
      }
      error(404, `Unknown route ${req.method} ${path}`, 'invalid_request_error');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}/v1`,
    requests,
    prompts: () =>
      requests
        .filter((r) => r.path === '/v1/chat/completions')
        .map((r) => ((r.body.messages ?? []) as ChatMessage[]).map((m) => m.content).join('\n')),
    configure: (next) => {
      options = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
