import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { ActionServerError, type ActionContext } from 'src/core/actions/action';
import {
  type ActionCallOutcome,
  type ActionServerObserver,
  type CircuitStateName,
} from 'src/core/actions/action-circuit';
import { actionFor } from 'src/core/actions/action-registry';
import { ActionEndpoint } from 'src/core/actions/remote-action';
import { Domain } from 'src/core/domain/domain';
import { DialogueStateTracker } from 'src/core/tracker/dialogue-state-tracker';

type Mode = 'ok' | 'fail' | 'hang' | 'reject';

/** A loopback action server whose answer the test switches: ok, 500, never, 400. */
async function startServer(): Promise<{
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
      const status = state.mode === 'ok' ? 200 : state.mode === 'fail' ? 500 : 400;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status === 200 ? { events: [], responses: [] } : { error: 'no' }));
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

class RecordingObserver implements ActionServerObserver {
  readonly outcomes: ActionCallOutcome[] = [];
  readonly states: CircuitStateName[] = [];
  callFinished(_t: string, _s: number, outcome: ActionCallOutcome): void {
    this.outcomes.push(outcome);
  }
  circuitChanged(_t: string, state: CircuitStateName): void {
    this.states.push(state);
  }
}

const domain = Domain.fromObject({ intents: ['greet'], actions: ['action_custom'] });

function contextOf(endpoint: ActionEndpoint): ActionContext {
  return {
    tracker: new DialogueStateTracker('ann', domain.slots),
    domain,
    channel: null,
    now: () => 1,
    endpoint,
    actionFor: (n) => actionFor(n, domain),
  };
}

describe('ActionEndpoint timeout and circuit breaker', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(() => server.close());

  const endpointOf = (
    observer: RecordingObserver,
    extra: { halfOpenAfterMs?: number; timeoutMs?: number } = {},
  ): ActionEndpoint =>
    new ActionEndpoint({ url: server.url, timeoutMs: extra.timeoutMs ?? 5000 }, '3.6.0', {
      circuit: {
        failureRatio: 0.5,
        minimumCalls: 10,
        windowMs: 60_000,
        halfOpenAfterMs: extra.halfOpenAfterMs ?? 60_000,
      },
      observer,
    });

  it('a hung action server fails the call once the timeout passes', async () => {
    server.mode = 'hang';
    const observer = new RecordingObserver();
    const endpoint = endpointOf(observer, { timeoutMs: 200 });
    const call = endpoint.call('action_custom', contextOf(endpoint));
    await expect(call).rejects.toBeInstanceOf(ActionServerError);
    await expect(call).rejects.toThrow(/no answer within 0.2 s/);
    expect(observer.outcomes).toEqual(['failure']);
  });

  it('opens after half of at least 10 calls failed, then refuses calls without sending them', async () => {
    const observer = new RecordingObserver();
    const endpoint = endpointOf(observer);
    const ctx = contextOf(endpoint);
    for (let i = 0; i < 5; i++) await endpoint.call('action_custom', ctx);
    server.mode = 'fail';
    for (let i = 0; i < 4; i++) {
      await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(/answered 500/);
    }
    // 4 of 9 failed: still closed; the 10th call (5 of 10) opens it.
    expect(endpoint.circuitState).toBe('closed');
    await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(/answered 500/);
    expect(endpoint.circuitState).toBe('open');
    expect(observer.states).toEqual(['closed', 'open']);

    const sent = server.calls.length;
    const refused = endpoint.call('action_custom', ctx);
    await expect(refused).rejects.toBeInstanceOf(ActionServerError);
    await expect(refused).rejects.toThrow(/circuit to the action server .* is open/);
    expect(server.calls).toHaveLength(sent);
    expect(observer.outcomes.at(-1)).toBe('short_circuited');
  });

  it('a rejection (HTTP 400) is an answer, not a failure of the server', async () => {
    server.mode = 'reject';
    const endpoint = endpointOf(new RecordingObserver());
    const ctx = contextOf(endpoint);
    for (let i = 0; i < 12; i++) {
      await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(/rejected execution/);
    }
    expect(endpoint.circuitState).toBe('closed');
  });

  it('half-open after the wait: one successful trial call closes the circuit', async () => {
    server.mode = 'fail';
    const observer = new RecordingObserver();
    const endpoint = endpointOf(observer, { halfOpenAfterMs: 50 });
    const ctx = contextOf(endpoint);
    for (let i = 0; i < 10; i++) {
      await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(ActionServerError);
    }
    expect(endpoint.circuitState).toBe('open');
    server.mode = 'ok';
    await new Promise((r) => setTimeout(r, 120));
    await expect(endpoint.call('action_custom', ctx)).resolves.toEqual({
      events: [],
      responses: [],
    });
    expect(endpoint.circuitState).toBe('closed');
    expect(observer.states).toEqual(['closed', 'open', 'half-open', 'closed']);
  });

  it('a failed trial call opens the circuit again', async () => {
    server.mode = 'fail';
    const endpoint = endpointOf(new RecordingObserver(), { halfOpenAfterMs: 50 });
    const ctx = contextOf(endpoint);
    for (let i = 0; i < 10; i++) {
      await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(ActionServerError);
    }
    await new Promise((r) => setTimeout(r, 120));
    await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(/answered 500/);
    expect(endpoint.circuitState).toBe('open');
  });

  it('forwards the context headers (traceparent) and never lets them override configured ones', async () => {
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const endpoint = new ActionEndpoint(
      { url: server.url, headers: { 'x-api-key': 'k' } },
      '3.6.0',
      { contextHeaders: () => ({ traceparent: parent, 'x-api-key': 'other' }) },
    );
    await endpoint.call('action_custom', contextOf(endpoint));
    expect(server.calls[0]).toMatchObject({ traceparent: parent, 'x-api-key': 'k' });
  });

  it('without a breaker every call is sent', async () => {
    server.mode = 'fail';
    const endpoint = new ActionEndpoint({ url: server.url }, '3.6.0');
    const ctx = contextOf(endpoint);
    for (let i = 0; i < 12; i++) {
      await expect(endpoint.call('action_custom', ctx)).rejects.toThrow(ActionServerError);
    }
    expect(server.calls).toHaveLength(12);
  });
});
