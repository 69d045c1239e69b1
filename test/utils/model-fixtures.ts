import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainModel } from 'src/cli/train.command';
import { FIXTURES } from 'test/utils/create-test-app';

export const MOODBOT = join(FIXTURES, 'moodbot');

/** Trains the test mood bot (one epoch) once per name into `dir` (each archive gets its own model id). */
export async function trainMoodbot(names: readonly string[], dir?: string): Promise<string[]> {
  const paths: string[] = [];
  for (const name of names) {
    const out = dir ?? mkdtempSync(join(tmpdir(), 'parley-mood-'));
    const result = await trainModel(
      {
        data: [join(MOODBOT, 'data')],
        domain: join(MOODBOT, 'domain.yml'),
        config: join(MOODBOT, 'config.yml'),
        out,
        fixedModelName: name,
        force: true,
      },
      () => undefined,
    );
    paths.push(result.path);
  }
  return paths;
}

/** What the test model server answers. */
export type ModelServerMode = 'serve' | 'error' | 'garbage' | 'no-etag';

export interface TestModelServer {
  readonly url: string;
  readonly requests: Array<{ url: string; headers: IncomingHttpHeaders; status: number }>;
  /** Serve this archive (ETag = `etag`) from now on; null → 404. */
  publish(archive: { path: string; etag: string } | null): void;
  mode: ModelServerMode;
  close(): Promise<void>;
}

/**
 * A model server on 127.0.0.1 following Rasa's contract: 200 + ETag + `filename` header, 304
 * when `If-None-Match` is the current ETag, 404 without a model; `mode` injects failures.
 */
export async function startModelServer(): Promise<TestModelServer> {
  let current: { bytes: Buffer; etag: string; name: string } | null = null;
  const requests: TestModelServer['requests'] = [];
  const state: { mode: ModelServerMode } = { mode: 'serve' };
  const server: Server = createServer((req, res) => {
    const log = (status: number) =>
      requests.push({ url: req.url ?? '', headers: req.headers, status });
    if (state.mode === 'error') {
      log(500);
      res.writeHead(500).end('boom');
      return;
    }
    if (state.mode === 'garbage') {
      log(200);
      res.writeHead(200, { ETag: '"garbage"' }).end(Buffer.from('not a model archive'));
      return;
    }
    if (current === null) {
      log(404);
      res.writeHead(404).end();
      return;
    }
    if (state.mode !== 'no-etag' && req.headers['if-none-match'] === current.etag) {
      log(304);
      res.writeHead(304).end();
      return;
    }
    log(200);
    res
      .writeHead(200, {
        'Content-Type': 'application/gzip',
        filename: current.name,
        ...(state.mode === 'no-etag' ? {} : { ETag: current.etag }),
      })
      .end(current.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/models/latest`,
    requests,
    publish(archive) {
      current =
        archive === null
          ? null
          : {
              bytes: readFileSync(archive.path),
              etag: archive.etag,
              name: archive.path.split('/').pop() ?? 'model.tar.gz',
            };
    },
    get mode() {
      return state.mode;
    },
    set mode(value: ModelServerMode) {
      state.mode = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Waits until `check` holds (polling every 25 ms); throws with `what` after `ms`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
