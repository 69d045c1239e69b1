import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ran, startActionServer, type TestActionServer } from 'test/utils/action-server';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';

const DOMAIN = `
version: "3.1"
intents: [greet]
actions: [action_slow]
responses:
  utter_greet:
    - text: Hello!
`;

/** Requests held in flight when SIGTERM arrives. */
const IN_FLIGHT = 6;

/**
 * Graceful shutdown of `parley run` under load: SIGTERM while turns wait on a slow action server
 * → readiness fails at once (503, or the listener is already closed), every request in flight
 * is answered 2xx, and the process exits 0.
 */
describe('parley run on SIGTERM with turns in flight', () => {
  let dir: string;
  let actions: TestActionServer;
  let server: CliServer | undefined;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let arrived: () => void = () => undefined;
  const allArrived = new Promise<void>((resolve) => (arrived = resolve));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-shutdown-'));
    actions = await startActionServer({
      action_slow: async () => {
        if (actions.calls.length >= IN_FLIGHT) arrived();
        await released;
        return ran([]);
      },
    });
    const domain = join(dir, 'domain.yml');
    writeFileSync(domain, DOMAIN);
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n`);
    server = await startCliServer(['--enable-api', '--domain', domain, '--endpoints', endpoints], {
      ...process.env,
      LOG_LEVEL: 'warn',
      // The listener keeps answering (readiness 503) while the load balancer reacts.
      PARLEY_SHUTDOWN_DELAY_MS: '1000',
    });
  }, 120_000);

  afterAll(async () => {
    release();
    if (server?.running()) await server.stop();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails readiness, finishes every request in flight and exits 0', async () => {
    // A stuck shutdown would show as this test's timeout.
    const base = server!.base;
    const ids = Array.from({ length: IN_FLIGHT }, () => uniqueId('drain'));
    for (const sender of ids) {
      const greeted = await fetch(`${base}/webhooks/rest/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sender, message: '/greet' }),
      });
      expect(greeted.status).toBe(200);
    }
    const inFlight = ids.map((id) =>
      fetch(`${base}/conversations/${id}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'action_slow' }),
      }),
    );
    await allArrived;
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);

    server!.kill('SIGTERM');
    // The launcher passes the signal on to the server; from the first answer that is not 200,
    // readiness never answers 200 again: 503 while the listener still serves, then the
    // listener is closed (connection refused) — all while the turns are still held.
    let answered503 = false;
    let closed = false;
    for (let i = 0; i < 400 && !closed; i++) {
      const res = await fetch(`${base}/health/ready`).catch(() => null);
      if (res === null) closed = true;
      else if (res.status !== 200 || answered503) {
        expect(res.status).toBe(503);
        const body = (await res.json()) as { details: { server: unknown } };
        expect(body.details.server).toEqual({ status: 'down', shuttingDown: true });
        answered503 = true;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(answered503 || closed).toBe(true);
    expect(server!.running()).toBe(true);

    release();
    const answers = await Promise.all(inFlight);
    for (const res of answers) expect(res.status).toBe(200);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as {
      tracker: { latest_action_name: string };
    }[];
    for (const body of bodies) expect(body.tracker.latest_action_name).toBe('action_slow');
    expect(await server!.exited).toBe(0);
  });
});
