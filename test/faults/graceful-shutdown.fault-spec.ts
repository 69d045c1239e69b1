import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCliServer, type CliServer } from 'test/utils/cli';
import { uniqueId } from 'test/utils/create-test-app';
import { startRoundRobinProxy, type RoundRobinProxy } from 'test/utils/round-robin-proxy';

const DOMAIN = `
version: "3.1"
intents: [greet]
responses:
  utter_greet:
    - text: Hello!
`;

/** Concurrent clients, each sending one message after the other. */
const CONNECTIONS = 50;
/** Kubernetes' default grace period is 30 s; the process must be gone well before. */
const EXIT_DEADLINE_MS = 25_000;

/**
 * SIGTERM to one of two `parley run` processes behind a proxy that probes readiness (as a
 * Kubernetes Service does) while 50 clients keep sending messages: the stopping replica fails
 * readiness at once, keeps answering while the proxy reacts (PARLEY_SHUTDOWN_DELAY_MS), finishes
 * what is in flight and exits 0 within 25 s; no client sees a failed request.
 */
describe('graceful shutdown of one of two replicas under load', () => {
  let dir: string;
  const servers: CliServer[] = [];
  let proxy: RoundRobinProxy;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-graceful-'));
    const domain = join(dir, 'domain.yml');
    writeFileSync(domain, DOMAIN);
    const env = {
      ...process.env,
      LOG_LEVEL: 'warn',
      PARLEY_NODE_FLAGS: 'none',
      // Longer than two probe periods of the proxy below.
      PARLEY_SHUTDOWN_DELAY_MS: '1500',
    };
    for (let i = 0; i < 2; i++) {
      servers.push(await startCliServer(['--enable-api', '--domain', domain], env, 120_000));
    }
    proxy = await startRoundRobinProxy(
      servers.map((s) => s.base),
      { checkMs: 200, probeAll: true },
    );
  }, 240_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(servers.filter((s) => s.running()).map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('0 failed requests; the stopped replica exits 0 within 25 s', async () => {
    const failures: string[] = [];
    let answered = 0;
    let stop = false;
    const client = async (): Promise<void> => {
      const sender = uniqueId('graceful');
      while (!stop) {
        try {
          const res = await fetch(`${proxy.url}/webhooks/rest/webhook`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sender, message: '/greet' }),
          });
          const text = await res.text();
          if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
          else answered++;
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const clients = Array.from({ length: CONNECTIONS }, () => client());

    // Load on both replicas first.
    while (proxy.forwarded.some((n) => n < 100)) await new Promise((r) => setTimeout(r, 50));
    const victim = servers[0]!;
    const signalled = Date.now();
    victim.kill('SIGTERM');
    let deadline: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      victim.exited,
      new Promise<'late'>((r) => (deadline = setTimeout(() => r('late'), EXIT_DEADLINE_MS))),
    ]);
    clearTimeout(deadline);
    const exitMs = Date.now() - signalled;
    // Keep the load on the survivor for a while after the exit.
    const afterExit = answered;
    while (answered < afterExit + 200) await new Promise((r) => setTimeout(r, 50));
    stop = true;
    await Promise.all(clients);

    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(EXIT_DEADLINE_MS);
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(400);
    expect(victim.output()).not.toMatch(/unhandled|uncaught/i);
  }, 120_000);
});
