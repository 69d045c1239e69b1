import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a test action server received (rasa-sdk's request body). */
export interface ActionCall {
  readonly next_action: string;
  readonly sender_id: string;
  readonly tracker: {
    events: Record<string, unknown>[];
    slots: Record<string, unknown>;
    latest_message: { entities: { entity: string; value: unknown }[] };
  };
  readonly domain: Record<string, unknown>;
  readonly version: string;
}

/** The HTTP status and JSON body an action answers with. */
export interface ActionReply {
  readonly status: number;
  readonly body: unknown;
}

export interface TestActionServer {
  /** The `action_endpoint` url. */
  readonly url: string;
  readonly calls: ActionCall[];
  close(): Promise<void>;
}

/** rasa-sdk's `Tracker.slots_to_validate`: the slot events at the end of the tracker. */
export function slotsToValidate(events: Record<string, unknown>[]): Record<string, unknown> {
  const slots: Record<string, unknown> = {};
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as Record<string, unknown>;
    if (e.event !== 'slot') break;
    if (!((e.name as string) in slots)) slots[e.name as string] = e.value;
  }
  return slots;
}

/** A 200 answer with events and responses, as rasa-sdk sends after running an action. */
export function ran(
  events: Record<string, unknown>[],
  responses: Record<string, unknown>[] = [],
): ActionReply {
  return { status: 200, body: { events, responses } };
}

/** Where a call came in: the request path (one server can stand behind several endpoint urls). */
export interface ActionRequest {
  readonly path: string;
}

/**
 * A custom action server on loopback speaking rasa-sdk's protocol: every POSTed call is recorded
 * (unless `record` is false: long load runs) and answered by its entry in `actions`; unknown
 * actions get a 404 like rasa-sdk's. It answers on any path under its port.
 */
export async function startActionServer(
  actions: Record<
    string,
    (call: ActionCall, request: ActionRequest) => ActionReply | Promise<ActionReply>
  >,
  { record = true } = {},
): Promise<TestActionServer> {
  const calls: ActionCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const call = JSON.parse(body) as ActionCall;
      if (record) calls.push(call);
      const action = actions[call.next_action];
      void Promise.resolve(
        action
          ? action(call, { path: req.url ?? '/' })
          : { status: 404, body: { error: `no action ${call.next_action}` } },
      ).then((reply) => {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An action server plus an `endpoints.yml` naming it, in a temp folder that close() removes. */
export async function withEndpointsFile(
  server: Promise<TestActionServer>,
): Promise<TestActionServer & { readonly endpoints: string }> {
  const actions = await server;
  const dir = mkdtempSync(join(tmpdir(), 'parley-endpoints-'));
  const endpoints = join(dir, 'endpoints.yml');
  writeFileSync(endpoints, `action_endpoint:\n  url: "${actions.url}"\n`);
  return {
    ...actions,
    endpoints,
    close: async () => {
      await actions.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
