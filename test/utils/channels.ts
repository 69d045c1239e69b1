import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { MOODBOT, trainBot } from 'test/utils/bots';

const tempDirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** The mood bot's utter_greet as the rest and callback channels send it. */
export const MOODBOT_GREETING = {
  text: 'Hi there! How is your day going?',
  buttons: [
    { title: 'good', payload: '/mood_great' },
    { title: 'not so good', payload: '/mood_unhappy' },
  ],
};

/** Removes the folders credentialsFile and trainMoodbot made (call it in afterAll). */
export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes a credentials.yml into a fresh folder and returns its path. */
export function credentialsFile(yaml: string): string {
  const dir = tempDir('parley-credentials-');
  const file = join(dir, 'credentials.yml');
  writeFileSync(file, yaml);
  return file;
}

/**
 * Trains the test mood bot (test/fixtures/moodbot: NLU + dialogue) with `parley train` into a
 * fresh folder and returns the models directory, for `PARLEY_MODEL`.
 */
export function trainMoodbot(): string {
  return trainBot(MOODBOT, join(tempDir('parley-moodbot-'), 'models'));
}

/** A request a ReceivingServer got. */
export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** A real HTTP server on loopback that records every request and answers `status`. */
export interface ReceivingServer {
  readonly url: string;
  readonly received: Received[];
  status: number;
  close(): Promise<void>;
}

export async function startReceivingServer(): Promise<ReceivingServer> {
  const received: Received[] = [];
  const state = { status: 200 };
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString()));
    req.on('end', () => {
      let body: unknown = data;
      try {
        body = JSON.parse(data);
      } catch {
        // keep the text
      }
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.statusCode = state.status;
      res.end(state.status < 400 ? 'ok' : 'callback failed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get status() {
      return state.status;
    },
    set status(value: number) {
      state.status = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The user events of a conversation, read over the tracker route (none when it is unknown). */
export async function userEvents(url: string, id: string): Promise<Record<string, unknown>[]> {
  const res = await request(url).get(`/conversations/${encodeURIComponent(id)}/tracker`);
  if (res.status !== 200) return [];
  const events = res.body.events as Record<string, unknown>[];
  return events.filter((e) => e.event === 'user');
}

/** A failure body (`version`, `status: "failure"`, `reason`, `message`, `code`) with `status`. */
export function expectFailure(res: request.Response, status: number): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ version: expect.any(String), status: 'failure', code: status });
  expect(res.body.reason).toEqual(expect.any(String));
  expect(res.body.message).toEqual(expect.any(String));
}

/** The 401 failure body of a request whose signature or token is missing or wrong. */
export function expectUnauthorized(res: request.Response): void {
  expectFailure(res, 401);
}
