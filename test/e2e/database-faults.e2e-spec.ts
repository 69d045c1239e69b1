import { request as httpRequest } from 'node:http';
import { Client } from 'pg';
import { io, type Socket } from 'socket.io-client';
import { credentialsFile, removeTempDirs } from 'test/utils/channels';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import { fetchToken, graphql, startTestIdp, type TestIdp } from 'test/utils/oidc';
import { startPgProxy, type PgProxy } from 'test/utils/pg-proxy';

/**
 * Database faults under load, against `parley run` (launcher and server process) whose
 * DATABASE_URL goes through a TCP proxy the test can cut: the app's backends terminated by
 * pg_terminate_backend, a ~3 s outage, recovery without restart, and shutdown with a request
 * in flight. Every request answered 200 must be stored; while the database is unreachable
 * requests get 503 with Retry-After and the failure body; the process never exits on its own.
 */

/** Conversations driven through the REST webhook, and through tracker appends. */
const WEBHOOK_CONVERSATIONS = 6;
const APPEND_CONVERSATIONS = 3;
/** Upper bound of requests per conversation per phase. */
const MAX_REQUESTS_PER_PHASE = 400;
const PAUSE_MS = 15;
const TERMINATION_ROUNDS = 6;
const OUTAGE_MS = 3000;

type Phase = 'warmup' | 'burst' | 'outage' | 'restoring' | 'recovered';

interface Outcome {
  readonly text: string;
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: unknown;
  readonly startedIn: Phase;
  readonly endedIn: Phase;
}

interface Driver {
  readonly id: string;
  readonly kind: 'webhook' | 'append';
  readonly outcomes: Outcome[];
  next: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `promise`, or `fallback` should it not settle within `ms` (a bound, not an assertion). */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('database faults (parley run behind a cuttable proxy)', () => {
  let proxy: PgProxy;
  let server: CliServer;
  let admin: Client;
  let idp: TestIdp;
  let oidcToken: string;
  let phase: Phase = 'warmup';
  const drivers: Driver[] = [];

  beforeAll(async () => {
    const databaseUrl = process.env.DATABASE_URL as string;
    proxy = await startPgProxy(databaseUrl);
    admin = new Client({ connectionString: databaseUrl, application_name: 'fault-test-admin' });
    admin.on('error', () => undefined);
    await admin.connect();
    idp = await startTestIdp();
    oidcToken = await fetchToken(idp);
    server = await startCliServer(
      ['--enable-api', '--domain', 'test/fixtures/moodbot/domain.yml'],
      {
        ...process.env,
        DATABASE_URL: proxy.url,
        LOCK_STORE: 'postgres',
        LOG_LEVEL: 'warn',
        OIDC_ISSUER_URL: idp.issuer,
        OIDC_EMBEDDED: 'false',
        // The callback URL is never called: a domain without policies sends no bot messages.
        PARLEY_CREDENTIALS: credentialsFile(
          'rest:\ncallback:\n  url: http://127.0.0.1:9/\nsocketio:\n  session_persistence: true\n',
        ),
      },
    );
    for (let i = 0; i < WEBHOOK_CONVERSATIONS; i++) {
      drivers.push({ id: uniqueId('fault-hook'), kind: 'webhook', outcomes: [], next: 0 });
    }
    for (let i = 0; i < APPEND_CONVERSATIONS; i++) {
      drivers.push({ id: uniqueId('fault-append'), kind: 'append', outcomes: [], next: 0 });
    }
  }, 90_000);

  afterAll(async () => {
    if (server?.running()) await server.stop();
    await admin?.end().catch(() => undefined);
    await proxy?.close();
    await idp?.close();
    removeTempDirs();
  });

  /** One turn (webhook) or one appended user event (tracker route), recorded with its phase. */
  async function send(driver: Driver): Promise<Outcome> {
    const text = `${driver.kind}-${driver.next++}`;
    const startedIn = phase;
    const res =
      driver.kind === 'webhook'
        ? await fetch(`${server.base}/webhooks/rest/webhook`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender: driver.id, message: text }),
          })
        : await fetch(`${server.base}/conversations/${driver.id}/tracker/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ event: 'user', text }),
          });
    const body = await res.json();
    const outcome: Outcome = {
      text,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body,
      startedIn,
      endedIn: phase,
    };
    driver.outcomes.push(outcome);
    return outcome;
  }

  /** Every driver sends one request after the other until `done` resolves (bounded). */
  async function load(done: Promise<void>): Promise<void> {
    let finished = false;
    void done.then(
      () => (finished = true),
      () => (finished = true),
    );
    await Promise.all(
      drivers.map(async (driver) => {
        for (let i = 0; i < MAX_REQUESTS_PER_PHASE && !finished; i++) {
          await send(driver);
          await sleep(PAUSE_MS);
        }
      }),
    );
  }

  function all(): Outcome[] {
    return drivers.flatMap((d) => d.outcomes);
  }

  function expectUnavailable(o: Outcome): void {
    expect(o.status).toBe(503);
    expect(o.retryAfter).toMatch(/^\d+$/);
    expect(o.body).toEqual(
      expect.objectContaining({
        version: expect.any(String),
        status: 'failure',
        reason: 'ServiceUnavailable',
        message: expect.any(String),
        code: 503,
      }),
    );
  }

  /** The other routes that store a turn, and the callback and socket.io channels, once each. */
  async function outageOnOtherRoutes(): Promise<{
    http: Outcome[];
    socketFailure: unknown;
    graphqlCodes: unknown[];
  }> {
    const id = drivers[0]!.id;
    const post = async (path: string, body: unknown): Promise<Outcome> => {
      const res = await fetch(`${server.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        text: path,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: await res.json(),
        startedIn: 'outage',
        endedIn: 'outage',
      };
    };
    const http = [
      await post(`/conversations/${id}/messages`, { text: 'hello', sender: 'user' }),
      await post(`/conversations/${id}/trigger_intent`, { name: 'greet' }),
      await post(`/conversations/${id}/execute`, { name: 'utter_greet' }),
      await post('/webhooks/callback/webhook', { sender: id, message: 'hello' }),
    ];
    const listed = await graphql(
      server.base,
      oidcToken,
      'query Raw($input: RawConversationsInput!) { rawConversations(input: $input) { count } }',
      { input: { assistantId: 'any', limit: 1 } },
    );
    const graphqlCodes = (listed.body.errors ?? []).map((e) => e.extensions?.code);
    const socket: Socket = io(server.base, {
      path: '/socket.io',
      transports: ['websocket'],
      forceNew: true,
    });
    try {
      const confirmed = new Promise<void>((resolve) => {
        socket.once('session_confirm', () => resolve());
        socket.emit('session_request', { session_id: id });
      });
      await within(confirmed, 10_000, undefined);
      const failure = new Promise<unknown>((resolve) => socket.once('message_error', resolve));
      socket.emit('user_uttered', { message: 'hello', session_id: id });
      return {
        http,
        socketFailure: await within(failure, 10_000, 'no failure event'),
        graphqlCodes,
      };
    } finally {
      socket.close();
    }
  }

  it('stays up, answers 503 while the database is gone, recovers, and loses no acknowledged turn', async () => {
    // Warm-up: everything works.
    for (const driver of drivers) expect((await send(driver)).status).toBe(200);

    // A burst of pg_terminate_backend on the app's backends (both pools) under load.
    phase = 'burst';
    let terminated = 0;
    const burst = (async () => {
      for (let round = 0; round < TERMINATION_ROUNDS; round++) {
        await sleep(150);
        const r = await admin.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND application_name LIKE 'parley%'`,
        );
        terminated += r.rows[0]?.n ?? 0;
      }
    })();
    await load(burst);
    expect(terminated).toBeGreaterThan(0);
    expect(server.running()).toBe(true);
    for (const o of all().filter((x) => x.status !== 200)) expectUnavailable(o);

    // An outage: the proxy drops every connection and refuses new ones.
    await proxy.cut();
    phase = 'outage';
    const outage = sleep(OUTAGE_MS);
    const ready = (async () => {
      await sleep(OUTAGE_MS / 3);
      return fetch(`${server.base}/health/ready`);
    })();
    const others = (async () => {
      await sleep(OUTAGE_MS / 3);
      return outageOnOtherRoutes();
    })();
    await load(outage);
    expect((await ready).status).toBe(503);
    const other = await others;
    phase = 'restoring';
    await proxy.restore();
    expect(server.running()).toBe(true);
    const duringOutage = all().filter((o) => o.startedIn === 'outage' && o.endedIn === 'outage');
    expect(duringOutage.length).toBeGreaterThan(0);
    for (const o of duringOutage) expectUnavailable(o);
    for (const o of other.http) expectUnavailable(o);
    // socket.io: the client is told, with the failure body, instead of getting no reply.
    expect(other.socketFailure).toEqual(
      expect.objectContaining({ status: 'failure', reason: 'ServiceUnavailable', code: 503 }),
    );
    // GraphQL: the same outage is SERVICE_UNAVAILABLE, never INTERNAL_SERVER_ERROR.
    expect(other.graphqlCodes).toEqual(['SERVICE_UNAVAILABLE']);

    // Recovery without a restart: readiness comes back, then every conversation takes turns.
    let readyAgain = false;
    for (let i = 0; i < 120 && !readyAgain; i++) {
      readyAgain = (await fetch(`${server.base}/health/ready`)).status === 200;
      if (!readyAgain) await sleep(250);
    }
    expect(readyAgain).toBe(true);
    phase = 'recovered';
    for (const driver of drivers) expect((await send(driver)).status).toBe(200);
    for (const driver of drivers) expect((await send(driver)).status).toBe(200);

    // No status but 200 and 503 at any time; the process never exited.
    expect([...new Set(all().map((o) => o.status))].sort()).toEqual(
      expect.arrayContaining([200, 503]),
    );
    for (const o of all()) expect([200, 503]).toContain(o.status);
    expect(server.running()).toBe(true);
    expect(server.output()).not.toMatch(/Unhandled 'error' event|uncaughtException/);

    // Every acknowledged turn is stored, in order.
    for (const driver of drivers) {
      const res = await fetch(`${server.base}/conversations/${driver.id}/tracker`);
      expect(res.status).toBe(200);
      const tracker = (await res.json()) as { events: Array<{ event: string; text?: string }> };
      const stored = tracker.events.filter((e) => e.event === 'user').map((e) => e.text);
      const acknowledged = driver.outcomes.filter((o) => o.status === 200).map((o) => o.text);
      let at = 0;
      const missing: string[] = [];
      for (const text of acknowledged) {
        const found = stored.indexOf(text, at);
        if (found === -1) missing.push(text);
        else at = found + 1;
      }
      expect({ conversation: driver.id, missing }).toEqual({
        conversation: driver.id,
        missing: [],
      });
    }
  }, 120_000);

  it('on SIGTERM stops accepting, finishes the request in flight, then exits cleanly', async () => {
    const sender = uniqueId('fault-shutdown');
    const body = JSON.stringify({ sender, message: 'in flight at shutdown' });
    const half = Math.floor(body.length / 2);
    // A request whose headers and half its body reached the server: it is in flight.
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${server.base}/webhooks/rest/webhook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      req.write(body.slice(0, half));
      void (async () => {
        // Round trips on other connections: the first half has reached the server by then.
        for (let i = 0; i < 2; i++) await fetch(`${server.base}/health/live`);
        server.kill('SIGTERM');
        // The server stops accepting: new connections are refused while the request is open.
        let refused = false;
        for (let i = 0; i < 100 && !refused; i++) {
          refused = await fetch(`${server.base}/health/live`).then(
            () => false,
            () => true,
          );
          if (!refused) await sleep(100);
        }
        expect(refused).toBe(true);
        req.end(body.slice(half));
      })().catch(reject);
    });
    const result = await answer;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.text)).toEqual(expect.any(Array));
    expect(await server.exited).toBe(0);
    expect(server.output()).not.toContain('Cannot use a pool after calling end on the pool');
    const stored = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM conversation_event
       WHERE conversation_id = $1 AND type_name = 'user' AND data::jsonb->>'text' = $2`,
      [sender, 'in flight at shutdown'],
    );
    expect(stored.rows[0]?.n).toBe(1);
  }, 60_000);
});
