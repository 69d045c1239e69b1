import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Domain } from 'src/core';
import { metricsRegistry } from 'src/platform/metrics/registry';
import request from 'supertest';
import { startTestApp, type TestApp, uniqueId } from 'test/utils/create-test-app';

type Mode = 'ok' | 'fail' | 'hang';

/** A loopback action server that answers, fails (500) or never answers, recording headers. */
async function startSwitchableActionServer(): Promise<{
  url: string;
  mode: Mode;
  calls: IncomingHttpHeaders[];
  close(): Promise<void>;
}> {
  const state = { mode: 'ok' as Mode, calls: [] as IncomingHttpHeaders[] };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.calls.push(req.headers);
      if (state.mode === 'hang') return;
      res.writeHead(state.mode === 'ok' ? 200 : 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ events: [], responses: [{ text: 'pong' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/webhook`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

const DOMAIN = `
version: '3.1'
intents: [greet]
actions: [action_ping]
responses:
  utter_greet:
    - text: hi
`;

/**
 * The action server client inside the running app: a hung server costs one timeout and the
 * conversation stays usable; repeated failures open the circuit, after which the turn still
 * answers (Rasa's behaviour for an unreachable action server) without calling the server.
 */
describe('action server timeout and circuit breaker', () => {
  let actions: Awaited<ReturnType<typeof startSwitchableActionServer>>;
  let dir: string;
  let t: TestApp;

  beforeAll(async () => {
    actions = await startSwitchableActionServer();
    dir = mkdtempSync(join(tmpdir(), 'parley-circuit-'));
    const endpoints = join(dir, 'endpoints.yml');
    writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n`);
    t = await startTestApp({
      withDomain: false,
      env: {
        PARLEY_ENDPOINTS: endpoints,
        ACTION_SERVER_TIMEOUT_MS: '300',
        ACTION_SERVER_CIRCUIT_MIN_CALLS: '4',
        ACTION_SERVER_CIRCUIT_HALF_OPEN_MS: '600000',
      },
    });
    t.registry.load({
      domain: Domain.fromYaml(DOMAIN, 'domain.yml'),
      modelId: 'c1c2c3c4c5c6c7c8c9c0c1c2c3c4c5c6',
      modelFile: 'circuit.tar.gz',
      assistantId: 'circuit',
    });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await actions?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A stored conversation (execute needs one, as in Rasa). */
  const open = async (sender: string): Promise<string> => {
    await request(t.url)
      .post(`/conversations/${sender}/tracker/events`)
      .send({ event: 'action', name: 'action_listen' })
      .expect(200);
    return sender;
  };

  const execute = (sender: string, headers: Record<string, string> = {}) =>
    request(t.url)
      .post(`/conversations/${sender}/execute`)
      .set(headers)
      .send({ name: 'action_ping' });

  it('forwards the incoming traceparent to the action server', async () => {
    actions.mode = 'ok';
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await execute(await open(uniqueId('trace')), { traceparent }).expect(200);
    expect(res.body.messages).toEqual([expect.objectContaining({ text: 'pong' })]);
    expect(actions.calls.at(-1)).toMatchObject({ traceparent });
  });

  it('a hung action server costs one timeout; the conversation is free afterwards', async () => {
    actions.mode = 'hang';
    const sender = await open(uniqueId('hang'));
    const res = await execute(sender).expect(200);
    expect(res.body.messages).toEqual([]);
    // The lock was released with the turn: the next write on the conversation goes through.
    await request(t.url)
      .post(`/conversations/${sender}/tracker/events`)
      .send({ event: 'action', name: 'action_listen' })
      .expect(200);
  });

  it('after repeated failures the circuit opens: turns still answer, the server is not called', async () => {
    actions.mode = 'fail';
    const sender = await open(uniqueId('fail'));
    // The hang above was one failure; three more of at least four calls open the circuit.
    for (let i = 0; i < 3; i++) await execute(sender).expect(200);
    const circuit = await metricsRegistry.getSingleMetricAsString('parley_circuit_state');
    expect(circuit).toContain(`parley_circuit_state{target="${actions.url}"} 1`);

    const sent = actions.calls.length;
    const res = await execute(sender).expect(200);
    expect(res.body.messages).toEqual([]);
    expect(actions.calls).toHaveLength(sent);
    const tracker = await request(t.url).get(`/conversations/${sender}/tracker`).expect(200);
    const names = (tracker.body.events as { event: string; name?: string }[])
      .filter((e) => e.event === 'action')
      .map((e) => e.name);
    expect(names.filter((n) => n === 'action_ping')).toHaveLength(4);

    const durations = await metricsRegistry.getSingleMetricAsString(
      'parley_action_server_request_duration_seconds',
    );
    expect(durations).toContain('outcome="short_circuited"');
    expect(durations).toContain('outcome="failure"');
  });
});
